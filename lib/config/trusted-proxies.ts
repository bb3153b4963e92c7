import net from "node:net";

/**
 * Which forwarded addresses to believe. `hops`: that many proxies stand in front of
 * the app (0 = none, the socket peer is the caller). `cidrs`: any hop whose address
 * is in these ranges is a proxy of ours.
 */
export type TrustedProxies = { kind: "hops"; hops: number } | { kind: "cidrs"; list: net.BlockList; text: string[] };

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
