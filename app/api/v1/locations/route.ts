import { route } from "@/lib/api/route";
import { listLocations } from "@/lib/locations/operations";

export const GET = route(listLocations);
