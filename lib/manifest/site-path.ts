/**
 * Whether a link written in a manifest stays on this site (a drill-through `url`, issue 41).
 * A pattern on the text misses spellings a browser or a server resolves to another host:
 * `/.//evil.example` resolves to the path `//evil.example`, `/%2F%2Fevil.example` decodes to it,
 * and `/\evil.example` is `//evil.example` to a browser. So the link is resolved as a browser
 * resolves it, against a base that is no real host, and must keep that origin; its path, decoded
 * until it no longer changes, must not start with two slashes (either kind), which any redirect
 * that decodes it would send to another host.
 */
const BASE = "https://quarry.invalid";

export function isSitePath(link: string): boolean {
  if (!link.startsWith("/")) return false;
  let resolved: URL;
  try {
    resolved = new URL(link, BASE);
  } catch {
    return false;
  }
  if (resolved.origin !== BASE) return false;
  let path = resolved.pathname;
  // Each decoding that changes the text shortens it, so this ends.
  for (;;) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      return false; // a malformed %-escape: nothing proves where it leads
    }
    if (/^[/\\]{2}/.test(decoded)) return false;
    if (decoded === path) return true;
    path = decoded;
  }
}
