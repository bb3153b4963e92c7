import net from "node:net";
import type { TrustedProxies } from "@/lib/config/trusted-proxies";

/** The header the app's own HTTP server (scripts/server.mjs) sets to the socket's remote address. */
export const PEER_HEADER = "x-quarry-peer";
/** Proves the peer header came from this process's server, not from a client (which cannot know the key). */
export const PEER_KEY_HEADER = "x-quarry-peer-key";
/** Where scripts/server.mjs leaves its per-process random key; shared by identity, never sent to clients. */
const PEER_KEY_SLOT = Symbol.for("quarry.peerKey");

/** The socket peer's address as stamped by our own server, or null when the request did not come through it. */
function trustedPeerAddress(headers: Headers): string | null {
  const key = (globalThis as Record<symbol, unknown>)[PEER_KEY_SLOT];
  if (typeof key !== "string" || key.length < 16) return null;
  if (headers.get(PEER_KEY_HEADER) !== key) return null;
  const peer = normalize(headers.get(PEER_HEADER) ?? "");
  return peer || null;
}

/**
 * The caller's address: the socket peer, or with trusted proxies the rightmost
 * `X-Forwarded-For` entry that is not one of ours (entries to its left are
 * written by the client and can say anything). Null when the peer is unknown
 * (a request that did not pass through scripts/server.mjs, e.g. `next dev`).
 */
export function clientAddress(headers: Headers, trust: TrustedProxies): string | null {
  const peer = trustedPeerAddress(headers);
  if (!peer) return null;
  return pickClientAddress(peer, headers.get("x-forwarded-for"), trust);
}

/** The rightmost-untrusted rule over the chain `X-Forwarded-For..., peer`. */
export function pickClientAddress(peer: string, forwardedFor: string | null, trust: TrustedProxies): string {
  const chain = [...(forwardedFor ?? "").split(",").map(normalize).filter(Boolean), normalize(peer)];
  if (trust.kind === "hops") {
    // With N proxies the peer is the Nth; the caller is the address the Nth proxy saw, N steps left of the end.
    return chain[Math.max(0, chain.length - 1 - trust.hops)];
  }
  for (let i = chain.length - 1; i >= 0; i--) {
    const address = chain[i];
    const family = net.isIP(address);
    // Garbage in the chain cannot be one of our proxies: stop there and key on it (as text).
    if (family === 0 || !trust.list.check(address, family === 4 ? "ipv4" : "ipv6")) return address;
  }
  return chain[0];
}

/** Strips brackets, ports and the IPv4-mapped IPv6 prefix so one caller has one spelling. */
function normalize(raw: string): string {
  let value = raw.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
  if (bracketed) value = bracketed[1];
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(value)) value = value.slice(0, value.lastIndexOf(":"));
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(value);
  return mapped ? mapped[1] : value;
}
