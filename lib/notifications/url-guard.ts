import "server-only";
import dns from "node:dns/promises";
import net from "node:net";
import { notificationsConfig } from "@/lib/config/notifications";

/** Why an outbound target was refused; the message is safe to show to the admin. */
export class UnsafeTargetError extends Error {}

const BLOCKED = new net.BlockList();
for (const [prefix, bits] of [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["224.0.0.0", 4], ["240.0.0.0", 4],
] as const) BLOCKED.addSubnet(prefix, bits, "ipv4");
for (const [prefix, bits] of [["::", 128], ["::1", 128], ["fc00::", 7], ["fe80::", 10], ["ff00::", 8], ["::ffff:0:0", 96]] as const) {
  BLOCKED.addSubnet(prefix, bits, "ipv6");
}

function isBlockedAddress(address: string): boolean {
  const family = net.isIP(address);
  return family === 4 ? BLOCKED.check(address, "ipv4") : family === 6 ? BLOCKED.check(address, "ipv6") : true;
}

export function isAllowListed(host: string): boolean {
  const normalized = host.replace(/^\[|\]$/g, "").toLowerCase();
  return notificationsConfig().url_allow_list.some((h) => h.toLowerCase() === normalized);
}

/**
 * Refuses hosts that are, or resolve to, private, loopback, link-local or
 * otherwise internal addresses (SSRF), unless the host is on the configured
 * allow-list. Checked when a channel is saved and again before every send,
 * so a DNS change cannot turn a saved URL inward.
 */
export async function assertPublicHost(host: string): Promise<void> {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  if (isAllowListed(bare)) return;
  if (bare === "localhost" || bare.endsWith(".localhost") || bare.endsWith(".internal") || bare.endsWith(".local")) {
    throw new UnsafeTargetError(`Host '${host}' is internal; add it to NOTIFICATIONS_CONFIG.url_allow_list to allow it`);
  }
  let addresses: string[];
  if (net.isIP(bare)) addresses = [bare];
  else {
    try {
      addresses = (await dns.lookup(bare, { all: true })).map((a) => a.address);
    } catch {
      throw new UnsafeTargetError(`Host '${host}' does not resolve`);
    }
  }
  const blocked = addresses.find(isBlockedAddress);
  if (blocked) throw new UnsafeTargetError(`Host '${host}' points at a private or reserved address (${blocked}); add it to NOTIFICATIONS_CONFIG.url_allow_list to allow it`);
}

/** An http(s) URL that is safe to call: https unless allow-listed, and a public host. */
export async function assertSafeUrl(raw: string): Promise<URL> {
  const url = new URL(raw);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isAllowListed(url.hostname))) {
    throw new UnsafeTargetError("URL must use https");
  }
  if (url.username || url.password) throw new UnsafeTargetError("URL must not carry credentials");
  await assertPublicHost(url.hostname);
  return url;
}
