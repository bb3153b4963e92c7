import { refuseMethod } from "@/lib/api/allowed-methods";
import { route } from "@/lib/api/route";
import { createUpload } from "@/lib/data/operations";

export const POST = route(createUpload);

// This path bypasses the request gate (proxy.ts: a file streams), so it answers other methods itself.
export { refuseMethod as GET, refuseMethod as PUT, refuseMethod as PATCH, refuseMethod as DELETE };
