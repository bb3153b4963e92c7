import "server-only";
import dns from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { notificationsConfig } from "@/lib/config/notifications";
import { isBlockedAddress, isInternalHostName } from "@/lib/security/internal-address";

/** Why an outbound target was refused; the message is safe to show to the admin. */
export class UnsafeTargetError extends Error {}

/** An address that was checked, and the only one a connection to its host may use. */
export interface PinnedTarget {
  host: string;
  address: string;
  family: 4 | 6;
}

function isAllowListed(host: string): boolean {
  const normalized = host.replace(/^\[|\]$/g, "").toLowerCase();
  return notificationsConfig().url_allow_list.some((h) => h.toLowerCase() === normalized);
}

/**
 * Resolves a host once and refuses it when it is, or resolves to, a private,
 * loopback, link-local or otherwise internal address (SSRF), unless it is on
 * the configured allow-list. The result is the address to connect to: callers
 * pin their connection to it (pinnedLookup), so a second DNS answer (DNS
 * rebinding) is never consulted. Checked when a channel is saved and before every send.
 */
export async function assertPublicHost(host: string): Promise<PinnedTarget> {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  const allowListed = isAllowListed(bare);
  if (!allowListed && isInternalHostName(bare)) {
    throw new UnsafeTargetError(`Host '${host}' is internal; add it to NOTIFICATIONS_CONFIG.url_allow_list to allow it`);
  }
  let addresses: { address: string; family: number }[];
  if (net.isIP(bare)) addresses = [{ address: bare, family: net.isIP(bare) }];
  else {
    try {
      addresses = await dns.lookup(bare, { all: true });
    } catch {
      throw new UnsafeTargetError(`Host '${host}' does not resolve`);
    }
  }
  if (addresses.length === 0) throw new UnsafeTargetError(`Host '${host}' does not resolve`);
  if (!allowListed) {
    const blocked = addresses.find((a) => isBlockedAddress(a.address));
    if (blocked) throw new UnsafeTargetError(`Host '${host}' points at a private or reserved address (${blocked.address}); add it to NOTIFICATIONS_CONFIG.url_allow_list to allow it`);
  }
  return { host: bare, address: addresses[0].address, family: addresses[0].family === 6 ? 6 : 4 };
}

/** An http(s) URL that is safe to call: https unless allow-listed, and a public host, with the address to pin. */
export async function assertSafeUrl(raw: string): Promise<{ url: URL; target: PinnedTarget }> {
  const url = new URL(raw);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isAllowListed(url.hostname))) {
    throw new UnsafeTargetError("URL must use https");
  }
  if (url.username || url.password) throw new UnsafeTargetError("URL must not carry credentials");
  return { url, target: await assertPublicHost(url.hostname) };
}

/** A `lookup` for net/tls connections that answers with the checked address and nothing else. */
export function pinnedLookup(target: PinnedTarget): net.LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as unknown as net.LookupFunction;
}

const MAX_RESPONSE_BYTES = 1_048_576;

export interface GuardedRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  signal?: AbortSignal;
}

/**
 * `fetch` for outbound notification calls (webhooks, Slack): checks the URL,
 * then connects to exactly the address that was checked (the host name still
 * goes into Host and TLS SNI / certificate checks). Redirects are returned,
 * never followed. Built on node:http(s) because Node's bundled fetch offers no
 * per-request DNS hook without the undici package.
 */
export async function guardedFetch(rawUrl: string | URL, init: GuardedRequestInit = {}): Promise<Response> {
  const { url, target } = await assertSafeUrl(String(rawUrl));
  const client = url.protocol === "https:" ? https : http;
  return new Promise<Response>((resolve, reject) => {
    const req = client.request(
      url,
      { method: init.method ?? "GET", headers: init.headers, lookup: pinnedLookup(target), signal: init.signal, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) res.destroy(new Error(`response larger than ${MAX_RESPONSE_BYTES} bytes`));
          else chunks.push(chunk);
        });
        res.on("error", reject);
        res.on("end", () => {
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
          }
          const status = res.statusCode ?? 502;
          const body = status === 204 || status === 304 ? null : Buffer.concat(chunks);
          resolve(new Response(body, { status, statusText: res.statusMessage, headers }));
        });
      },
    );
    req.on("error", reject);
    req.end(init.body);
  });
}
