import { route } from "@/lib/api/route";
import { createPull, listPulls } from "@/lib/data/pipes/operations";

export const GET = route(listPulls);
export const POST = route(createPull);
