import { route } from "@/lib/api/route";
import { getMetricSeries } from "@/lib/dashboards/metrics-operations";

export const GET = route(getMetricSeries);
