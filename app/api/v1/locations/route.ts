import { route } from "@/lib/api/route";
import { createLocation, listLocations } from "@/lib/locations/operations";

export const GET = route(listLocations);
export const POST = route(createLocation);
