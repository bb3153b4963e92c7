import { readinessCheck } from "@/lib/api/contract";
import { route } from "@/lib/api/route";
import { checkReadiness } from "@/lib/db/health";

export const GET = route(readinessCheck, () => checkReadiness());
