import { config } from "@/lib/config";
import { forbidden } from "@/lib/errors";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * CSRF guard for requests authenticated by the session cookie, which the browser
 * attaches to cross-site requests too: a state-changing request must come from
 * a page of this app (its Origin, or Referer when a browser sends no Origin).
 * Bearer-token calls carry no ambient credential and are not checked.
 */
export function assertSameOrigin(req: Request): void {
  if (SAFE_METHODS.has(req.method.toUpperCase())) return;
  const origin = req.headers.get("origin");
  const referer = req.headers.get("referer");
  let claimed: string | null = null;
  if (origin && origin !== "null") claimed = origin;
  else if (!origin && referer) {
    try {
      claimed = new URL(referer).origin;
    } catch {
      claimed = null;
    }
  }
  if (!claimed) throw forbidden("Cross-site request refused: a signed-in browser request that changes data must carry this site's Origin");
  if (!isOwnOrigin(claimed, req.headers.get("host"))) {
    throw forbidden(`Cross-site request refused: Origin ${claimed} is not this site`);
  }
}

function isOwnOrigin(claimed: string, host: string | null): boolean {
  let url: URL;
  try {
    url = new URL(claimed);
  } catch {
    return false;
  }
  if (url.origin === new URL(config().publicUrl).origin) return true;
  // The Host header names the site the browser is talking to; a cross-site page cannot change it.
  return host !== null && (url.protocol === "https:" || url.protocol === "http:") && url.host === host.toLowerCase();
}
