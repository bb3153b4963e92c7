import { route } from "@/lib/api/route";
import { getMetricSeries } from "@/lib/datasets/operations";

export const GET = route(getMetricSeries);
