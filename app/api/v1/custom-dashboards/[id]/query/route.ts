import { route } from "@/lib/api/route";
import { queryDashboard } from "@/lib/dashboards/operations";

export const POST = route(queryDashboard);
