/**
 * Where the browser may be sent after signing in: a page of this site, nothing else. A
 * `startsWith("/") && !startsWith("//")` test is not enough, because browsers read `\` as `/` and
 * drop tabs and newlines inside a URL, so `/\evil.example/` and `/<TAB>/evil.example/` both become
 * `//evil.example/`, another site. The value is parsed as a URL against this site's origin, as the
 * browser will parse it, and kept only when the result is on this origin; it is refused outright
 * (home, "/") when, at any level of percent-decoding, it holds a backslash or a control character,
 * which no link of this app carries. What is returned is the path, query and fragment of the parsed
 * URL (never an absolute URL), and never starts with `//`.
 */

const HOME = "/";
/** C0 controls, DEL, C1 controls, and the backslash. */
const SUSPICIOUS = /[\u0000-\u001f\u007f-\u009f\\]/;
const MAX_LENGTH = 2048;

/** Every percent-decoding of `value` until it stops changing (a few rounds at most), the value itself first. */
function decodings(value: string): string[] {
  const forms = [value];
  let current = value;
  for (let i = 0; i < 4; i++) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      break;
    }
    if (next === current) break;
    forms.push(next);
    current = next;
  }
  return forms;
}

/** A path on `origin` to go to after sign-in: `value` when it is a page of this site, else "/". */
export function safeCallbackPath(value: unknown, origin: string): string {
  if (typeof value !== "string" || value === "" || value.length > MAX_LENGTH) return HOME;
  if (decodings(value).some((form) => SUSPICIOUS.test(form))) return HOME;
  let base: URL;
  let url: URL;
  try {
    base = new URL(origin);
    url = new URL(value, base.origin);
  } catch {
    return HOME;
  }
  if (url.origin !== base.origin || url.username || url.password) return HOME;
  const path = `${url.pathname}${url.search}${url.hash}`;
  // `/.//evil.example` parses to the path `//evil.example`, which a browser reads as another host.
  if (!path.startsWith("/") || path.startsWith("//")) return HOME;
  return path;
}

/** next-auth's `redirect` callback: the same rule, answered as an absolute URL on `baseUrl`. */
export function safeRedirectUrl(url: string, baseUrl: string): string {
  const origin = new URL(baseUrl).origin;
  return `${origin}${safeCallbackPath(url, origin)}`;
}
