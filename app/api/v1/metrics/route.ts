import { route } from "@/lib/api/route";
import { listMetrics } from "@/lib/datasets/operations";

export const GET = route(listMetrics);
