import { route } from "@/lib/api/route";
import { updateLocation } from "@/lib/locations/operations";

export const PATCH = route(updateLocation);
