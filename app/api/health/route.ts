import { healthCheck } from "@/lib/api/contract";
import { route } from "@/lib/api/route";
import { checkHealth } from "@/lib/db/health";

export const GET = route(healthCheck, () => checkHealth());
