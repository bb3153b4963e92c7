import net from "node:net";

/**
 * Which forwarded addresses to believe. `hops`: that many proxies stand in front of
 * the app (0 = none, the socket peer is the caller). `cidrs`: any hop whose address
 * is in these ranges is a proxy of ours.
 */
export type TrustedProxies = { kind: "hops"; hops: number } | { kind: "cidrs"; list: net.BlockList; text: string[] };

/** The header the app's own HTTP server (scripts/server.mjs) sets to the socket's remote address. */
export const PEER_HEADER = "x-quarry-peer";
/** Proves the peer header came from this process's server, not from a client (which cannot know the key). */
export const PEER_KEY_HEADER = "x-quarry-peer-key";
/** Where scripts/server.mjs leaves its per-process random key; shared by identity, never sent to clients. */
const PEER_KEY_SLOT = Symbol.for("quarry.peerKey");

/** Parses QUARRY_TRUSTED_PROXIES: empty/"0" = none, a number = hop count, else a comma-separated CIDR list. */
export function parseTrustedProxies(raw: string | undefined): TrustedProxies {
  const text = (raw ?? "").trim();
  if (text === "") return { kind: "hops", hops: 0 };
  if (/^\d+$/.test(text)) return { kind: "hops", hops: Number(text) };
  const list = new net.BlockList();
  const entries = text.split(",").map((s) => s.trim()).filter(Boolean);
  for (const entry of entries) {
    const [address, bitsText] = entry.split("/");
    const family = net.isIP(address);
    if (family === 0) throw new Error(`QUARRY_TRUSTED_PROXIES: '${entry}' is neither a hop count nor an IP address or CIDR`);
    const max = family === 4 ? 32 : 128;
    const bits = bitsText === undefined ? max : Number(bitsText);
    if (!Number.isInteger(bits) || bits < 0 || bits > max) throw new Error(`QUARRY_TRUSTED_PROXIES: '${entry}' has an invalid prefix length`);
    list.addSubnet(address, bits, family === 4 ? "ipv4" : "ipv6");
  }
  return { kind: "cidrs", list, text: entries };
}

/** The socket peer's address as stamped by our own server, or null when the request did not come through it. */
export function trustedPeerAddress(headers: Headers): string | null {
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
