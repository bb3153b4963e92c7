import type { NextRequest } from "next/server";
import { noEndpointResponse } from "@/lib/api/errors";

// Unknown paths under /api (/api/v1/…, and /api/v2/… or any other that is not an API version of ours) answer like
// every other error: {"detail": ...}, never Next's HTML 404 page (issue 32 §6).
const noEndpoint = (req: NextRequest) => noEndpointResponse(req.method, req.nextUrl.pathname);

export { noEndpoint as GET, noEndpoint as POST, noEndpoint as PUT, noEndpoint as PATCH, noEndpoint as DELETE };
