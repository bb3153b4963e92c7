import { ipFamily, isBlockedAddress, isInternalHostName } from "./internal-address";

/**
 * Origins an organization allows images from (issue 26 §7), as they go into a CSP `img-src`:
 * `https://host` with an optional port and an optional leading `*.` for every subdomain. Nothing
 * else: no path, query, credentials or spaces, since the value is written into a response header.
 * Only public origins (issue 41): https, and no host that is internal (`localhost`, `*.local`, an
 * address in a private, loopback, link-local or unique-local range, ./internal-address.ts), which
 * would let a page make its viewers' browsers call into their own network. Server-side (the
 * contract validates with it, the proxy writes it).
 */
export const MAX_IMAGE_ORIGINS = 20;

const SHAPE = /^(https):\/\/(\*\.)?([a-z0-9.-]+|\[[0-9a-f:.]+\])(:\d{1,5})?\/?$/i;

/**
 * The canonical form of an image origin (lower case, default port dropped), or null when it is not
 * one. Host names are ASCII (an internationalized name in its punycode form).
 */
export function normalizeImageOrigin(text: string): string | null {
  const match = SHAPE.exec(text.trim());
  if (!match) return null;
  const [, scheme, wildcard = "", host, port = ""] = match;
  let url: URL;
  try {
    url = new URL(`${scheme.toLowerCase()}://${host}${port}`);
  } catch {
    return null;
  }
  if (!url.hostname || url.hostname.startsWith(".") || url.hostname.endsWith(".") || url.hostname.includes("..")) return null;
  if (wildcard && (url.hostname.startsWith("[") || !url.hostname.includes("."))) return null;
  if (isInternalHostName(`${wildcard}${url.hostname}`)) return null;
  // The URL parser has already read every spelling of an address (0x7f.1, 2130706433) as its canonical form.
  const address = url.hostname.replace(/^\[|\]$/g, "");
  if (ipFamily(address) !== 0 && isBlockedAddress(address)) return null;
  return `${url.protocol}//${wildcard}${url.host}`;
}

/** The CSP `img-src` sources of a page: this origin, data: and blob: URLs, and the organization's list. */
export function imageSources(origins: readonly string[]): string {
  const listed = origins.map(normalizeImageOrigin).filter((o): o is string => o !== null);
  return ["'self'", "data:", "blob:", ...new Set(listed)].join(" ");
}
