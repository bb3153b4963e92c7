/**
 * Which addresses and host names are internal: private, loopback, link-local, unique-local,
 * reserved or special-use ranges, and the names that only mean something inside a network. One
 * classification for every place that must keep to the public internet: outbound calls
 * (lib/notifications/transports/url-guard.ts, SSRF) and the image origins written into the
 * pages' CSP (./image-origins.ts). Plain TypeScript without node:net: the organization settings'
 * contract validates image origins with it, and the browser's API client imports that contract.
 */

const BLOCKED_V4: readonly (readonly [string, number])[] = [
  ["0.0.0.0", 8], ["10.0.0.0", 8], ["100.64.0.0", 10], ["127.0.0.0", 8], ["169.254.0.0", 16], ["172.16.0.0", 12],
  ["192.0.0.0", 24], ["192.0.2.0", 24], ["192.88.99.0", 24], ["192.168.0.0", 16], ["198.18.0.0", 15], ["198.51.100.0", 24],
  ["203.0.113.0", 24], ["224.0.0.0", 4], ["240.0.0.0", 4],
];

const BLOCKED_V6: readonly (readonly [string, number])[] = [
  ["::", 128], ["::1", 128], ["100::", 64], ["2001:db8::", 32], ["2001:10::", 28], ["fc00::", 7], ["fe80::", 10], ["fec0::", 10], ["ff00::", 8],
  // Local-use NAT64 (RFC 8215): the operator picks where the IPv4 sits, so no decoding; refused outright.
  ["64:ff9b:1::", 48],
];

/** A dotted-quad IPv4 address as its 32-bit number, or null when the text is not one. */
function ipv4Number(address: string): number | null {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  if (!match) return null;
  const octets = match.slice(1).map(Number);
  if (octets.some((o) => o > 255)) return null;
  return octets.reduce((n, o) => n * 256 + o, 0);
}

/** Whether the first `bits` bits of two addresses, each as 16-bit groups (IPv4: two groups), agree. */
function samePrefix(a: readonly number[], b: readonly number[], bits: number): boolean {
  for (let i = 0; bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if ((a[i] & mask) !== (b[i] & mask)) return false;
  }
  return true;
}

const v4Groups = (n: number) => [Math.floor(n / 65536), n % 65536];
const inV4Ranges = (n: number) => BLOCKED_V4.some(([prefix, bits]) => samePrefix(v4Groups(n), v4Groups(ipv4Number(prefix)!), bits));

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

/** An IPv6 address's eight groups, or null when the text is not one address (a zone index is dropped). */
function ipv6Address(address: string): number[] | null {
  const text = address.split("%")[0];
  if (!/^[0-9a-f:.]+$/i.test(text) || !text.includes(":") || text.split("::").length > 2 || /:::/.test(text)) return null;
  const quad = /(?:^|:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad && ipv4Number(quad[1]) === null) return null;
  const groups = ipv6Groups(text);
  const written = text.replace(/(\d+\.\d+\.\d+\.\d+)$/, "0:0").split(":").filter((g) => g !== "");
  if (groups.length !== 8 || written.some((g) => !/^[0-9a-f]{1,4}$/i.test(g)) || (!text.includes("::") && written.length !== 8)) return null;
  return groups;
}

/** Whether an address is an IP address: 4, 6, or 0 for anything else (as node:net's isIP answers). */
export function ipFamily(address: string): 0 | 4 | 6 {
  if (ipv4Number(address) !== null) return 4;
  return ipv6Address(address) ? 6 : 0;
}

/** Whether an IP address is internal; anything that is not one address is refused. */
export function isBlockedAddress(address: string): boolean {
  const v4 = ipv4Number(address);
  if (v4 !== null) return inV4Ranges(v4);
  const groups = ipv6Address(address);
  if (!groups) return true;
  if (BLOCKED_V6.some(([prefix, bits]) => samePrefix(groups, ipv6Groups(prefix), bits))) return true;
  return embeddedIPv4(address).some((inner) => inV4Ranges(ipv4Number(inner)!));
}

/** Names that resolve only inside a network or on the machine itself (RFC 6761, RFC 6762, ICANN's .internal). */
export function isInternalHostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return name === "localhost" || name.endsWith(".localhost") || name.endsWith(".internal") || name.endsWith(".local");
}
