import { route } from "@/lib/api/route";
import { listLocations } from "@/lib/locations/contract";
import { listLocationsFor } from "@/lib/locations/service";

export const GET = route(listLocations, ({ principal, query }) => listLocationsFor(principal, query));
