import { route } from "@/lib/api/route";
import { healthCheck } from "@/lib/api/operations";

export const GET = route(healthCheck);
