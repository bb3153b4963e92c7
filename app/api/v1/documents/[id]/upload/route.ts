import { refuseMethod } from "@/lib/api/allowed-methods";
import { route } from "@/lib/api/route";
import { uploadDocument } from "@/lib/documents/operations";

export const POST = route(uploadDocument);

// This path bypasses the request gate (proxy.ts streams uploads), so it answers other methods itself.
export { refuseMethod as GET, refuseMethod as PUT, refuseMethod as PATCH, refuseMethod as DELETE };
