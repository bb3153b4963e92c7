import { refuseMethod } from "@/lib/api/allowed-methods";
import { route } from "@/lib/api/route";
import { ingestRows } from "@/lib/data/pipes/operations";

export const POST = route(ingestRows);

// This path bypasses the request gate (proxy.ts streams batches), so it answers other methods itself.
export { refuseMethod as GET, refuseMethod as PUT, refuseMethod as PATCH, refuseMethod as DELETE };
