import { route } from "@/lib/api/route";
import { listMetrics } from "@/lib/dashboards/metrics-operations";

export const GET = route(listMetrics);
