import { route } from "@/lib/api/route";
import { deletePull, getPull, updatePull } from "@/lib/data/pipes/operations";

export const GET = route(getPull);
export const PATCH = route(updatePull);
export const DELETE = route(deletePull);
