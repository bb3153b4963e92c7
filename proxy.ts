import { NextResponse, type NextRequest } from "next/server";
import { embedPagePolicy } from "@/lib/dashboards/embed-frame";
import { methodNotAllowed } from "@/lib/api/allowed-methods";
import { sessionClaimsOf } from "@/lib/auth/session";
import { log } from "@/lib/log";
import { imageOriginsOf } from "@/lib/organizations/settings";
import { contentSecurityPolicy, newNonce } from "@/lib/security/csp";

/** Request header the root layout reads: "bare" renders the page without the app's top bar. */
export const CHROME_HEADER = "x-quarry-chrome";

/** Pages shown without app chrome: embeds, public dashboards and the preview of what an embed consumer sees. */
function isBarePage(request: NextRequest): boolean {
  const { pathname } = request.nextUrl;
  if (pathname.startsWith("/embed/") || pathname.startsWith("/public/")) return true;
  return /^\/dashboards\/custom\/[^/]+\/preview\/?$/.test(pathname);
}

/**
 * The one preview is /dashboards/custom/<slug>/preview (the editor's Preview button and the docs);
 * the older `?preview=1` on the dashboard page answers a 308 to it, keeping the other parameters.
 */
function previewRedirect(request: NextRequest): NextResponse | null {
  const { pathname, searchParams } = request.nextUrl;
  const page = /^\/dashboards\/custom\/([^/]+)\/?$/.exec(pathname);
  if (!page || searchParams.get("preview") !== "1") return null;
  const target = request.nextUrl.clone();
  target.pathname = `/dashboards/custom/${page[1]}/preview`;
  target.searchParams.delete("preview");
  return NextResponse.redirect(target, 308);
}

/**
 * The request gate: gives every request an id and every page a Content-Security-Policy with a
 * fresh nonce for scripts and style elements (lib/security/csp.ts; Next.js takes the nonce from the
 * request's copy of the header) and its organization's image origins. Pages may not be framed by
 * anyone; /embed pages may be framed by the partner origins of their embed grant (CSP frame-ancestors).
 */
export async function proxy(request: NextRequest) {
  const requestId = request.headers.get("x-request-id") ?? crypto.randomUUID();
  // A method no endpoint serves at an existing API path: 405 with Allow and a detail, as every API error (Next would send an empty body).
  const wrongMethod = methodNotAllowed(request.method, request.nextUrl.pathname, requestId);
  if (wrongMethod) return wrongMethod;
  const preview = previewRedirect(request);
  if (preview) return preview;
  const embed = /^\/embed\/([^/]+)\/?$/.exec(request.nextUrl.pathname);
  const embedPolicy = embed ? await embedPagePolicy(safeDecode(embed[1])) : null;
  const csp = contentSecurityPolicy({
    nonce: newNonce(),
    frameAncestors: embedPolicy?.frameAncestors ?? "'none'",
    imageOrigins: await pageImageOrigins(request, embedPolicy?.orgId ?? null),
    dev: process.env.NODE_ENV === "development",
  });
  const headers = new Headers(request.headers);
  headers.set("x-request-id", requestId);
  headers.set("Content-Security-Policy", csp);
  if (isBarePage(request)) headers.set(CHROME_HEADER, "bare");
  else headers.delete(CHROME_HEADER);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("X-Request-Id", requestId);
  response.headers.set("X-Content-Type-Options", "nosniff");
  response.headers.set("Referrer-Policy", "strict-origin-when-cross-origin");
  response.headers.set("Content-Security-Policy", csp);
  if (!embed) response.headers.set("X-Frame-Options", "DENY");
  return response;
}

/**
 * Image origins the page's organization allows (lib/security/csp.ts): an embed's grant, a public
 * link's organization slug, or the signed-in user's organization; none for API answers and pages
 * without one. A failed look-up leaves the strict default rather than failing the page.
 */
async function pageImageOrigins(request: NextRequest, embedOrgId: string | null): Promise<readonly string[]> {
  const { pathname } = request.nextUrl;
  if (pathname.startsWith("/api/")) return [];
  try {
    const publicOrg = /^\/public\/([^/]+)\//.exec(pathname)?.[1];
    const org = embedOrgId ?? (publicOrg ? safeDecode(publicOrg) : ((await sessionClaimsOf(request)) as { org?: unknown } | null)?.org);
    return typeof org === "string" && org ? await imageOriginsOf(org) : [];
  } catch (error) {
    log.warn("image origins not read; the page allows only its own", { path: pathname, error: error instanceof Error ? error.message : String(error) });
    return [];
  }
}

/** A malformed escape (`/embed/%E0`) is kept as written: it matches no token or organization. */
function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export const config = {
  // Uploads bypass the proxy: Next buffers (and past 10 MB silently truncates) the body of every
  // request the proxy sees, and /api/v1/documents/{id}/upload must stream files of up to DOCUMENT_MAX_BYTES
  // (as /api/v1/data/tables/{name}/rows streams a pipeline's batch, and /api/v1/data/uploads a file to load). These
  // routes therefore answer their own wrong methods (refuseMethod in lib/api/allowed-methods.ts).
  matcher: ["/((?!_next/static|_next/image|favicon.ico|api/v1/documents/.+/upload|api/v1/data/tables/[^/]+/rows|api/v1/data/uploads$).*)"],
};
