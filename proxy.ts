import { NextResponse, type NextRequest } from "next/server";

/**
 * The request gate: gives every request an id and sets framing rules. Pages
 * may not be framed by anyone; /embed pages set their own frame-ancestors
 * (the partner origins of the embedded dashboard) in their route.
 */
export function proxy(request: NextRequest) {
  const requestId = request.headers.get("x-request-id") ?? crypto.randomUUID();
  const headers = new Headers(request.headers);
  headers.set("x-request-id", requestId);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("X-Request-Id", requestId);
  response.headers.set("X-Content-Type-Options", "nosniff");
  response.headers.set("Referrer-Policy", "strict-origin-when-cross-origin");
  if (!request.nextUrl.pathname.startsWith("/embed/")) {
    response.headers.set("X-Frame-Options", "DENY");
    response.headers.set("Content-Security-Policy", "frame-ancestors 'none'");
  }
  return response;
}

export const config = {
  // Uploads bypass the proxy: Next buffers (and past 10 MB silently truncates) the body of every
  // request the proxy sees, and /api/v1/documents/{id}/upload must stream files of up to DOCUMENT_MAX_BYTES.
  matcher: ["/((?!_next/static|_next/image|favicon.ico|api/v1/documents/.+/upload).*)"],
};
