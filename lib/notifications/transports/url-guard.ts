import "server-only";
import dns from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { notificationsConfig } from "@/lib/config/notifications";

/** Why an outbound target was refused; the message is safe to show to the admin. */
export class UnsafeTargetError extends Error {}

/** An address that was checked, and the only one a connection to its host may use. */
export interface PinnedTarget {
  host: string;
  address: string;
  family: 4 | 6;
}

const BLOCKED_V4 = new net.BlockList();
for (const [prefix, bits] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.0.2.0", 24], ["192.88.99.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["198.51.100.0", 24],
  ["203.0.113.0", 24], ["224.0.0.0", 4], ["240.0.0.0", 4],
] as const) BLOCKED_V4.addSubnet(prefix, bits, "ipv4");

const BLOCKED_V6 = new net.BlockList();
for (const [prefix, bits] of [
  ["::", 128], ["::1", 128], ["100::", 64], ["2001:db8::", 32], ["2001:10::", 28], ["fc00::", 7], ["fe80::", 10], ["fec0::", 10], ["ff00::", 8],
  // Local-use NAT64 (RFC 8215): the operator picks where the IPv4 sits, so no decoding; refused outright.
  ["64:ff9b:1::", 48],
] as const) BLOCKED_V6.addSubnet(prefix, bits, "ipv6");

/** The eight 16-bit groups of an IPv6 address (accepts `::` and a trailing dotted quad). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase().split("%")[0];
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad[1].split(".").map(Number);
    text = `${text.slice(0, -quad[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes("::") ? text.split("::") : [text, undefined];
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const missing = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array(missing).fill("0"), ...right].map((g) => parseInt(g, 16));
}

const v4 = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/**
 * The IPv4 addresses an IPv6 address carries and reaches: IPv4-mapped
 * (::ffff:0:0/96), IPv4-compatible (::/96, e.g. `[::7f00:1]`), NAT64
 * (64:ff9b::/96), 6to4 (2002::/16) and Teredo (2001::/32, server and the
 * inverted client address). Each must pass the IPv4 rules.
 */
export function embeddedIPv4(address: string): string[] {
  const g = ipv6Groups(address);
  if (g.length !== 8 || g.some((n) => Number.isNaN(n))) return [];
  const zeros = (from: number, to: number) => g.slice(from, to).every((n) => n === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return [v4(g[6], g[7])];
  if (zeros(0, 6)) return [v4(g[6], g[7])];
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return [v4(g[6], g[7])];
  if (g[0] === 0x2002) return [v4(g[1], g[2])];
  if (g[0] === 0x2001 && g[1] === 0) return [v4(g[2], g[3]), v4(g[6] ^ 0xffff, g[7] ^ 0xffff)];
  return [];
}

export function isBlockedAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return BLOCKED_V4.check(address, "ipv4");
  if (family !== 6) return true;
  if (BLOCKED_V6.check(address, "ipv6")) return true;
  return embeddedIPv4(address).some((inner) => BLOCKED_V4.check(inner, "ipv4"));
}

export function isAllowListed(host: string): boolean {
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
  if (!allowListed && (bare === "localhost" || bare.endsWith(".localhost") || bare.endsWith(".internal") || bare.endsWith(".local"))) {
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
