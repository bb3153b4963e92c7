import { NextResponse, type NextRequest } from "next/server";

// Unknown /api/v1 paths answer like every other error: {"detail": ...}.
function notFound(req: NextRequest) {
  return NextResponse.json({ detail: `No endpoint ${req.method} ${req.nextUrl.pathname}; see /docs` }, { status: 404 });
}

export { notFound as GET, notFound as POST, notFound as PUT, notFound as PATCH, notFound as DELETE };
