import { NextResponse, type NextRequest } from "next/server";

// Unknown paths under /api (/api/v1/…, and /api/v2/… or any other that is not an API version of ours) answer like
// every other error: {"detail": ...}, never Next's HTML 404 page (issue 32 §6).
function notFound(req: NextRequest) {
  return NextResponse.json({ detail: `No endpoint ${req.method} ${req.nextUrl.pathname}; see /docs` }, { status: 404 });
}

export { notFound as GET, notFound as POST, notFound as PUT, notFound as PATCH, notFound as DELETE };
