import { route } from "@/lib/api/route";
import { readinessCheck } from "@/lib/api/operations";

export const GET = route(readinessCheck);
