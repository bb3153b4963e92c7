import { route } from "@/lib/api/route";
import { certifyMetric, uncertifyMetric } from "@/lib/dashboards/metrics-operations";

export const PUT = route(certifyMetric);
export const DELETE = route(uncertifyMetric);
