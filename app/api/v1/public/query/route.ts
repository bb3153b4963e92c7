import { route } from "@/lib/api/route";
import { queryPublicDashboard } from "@/lib/dashboards/operations";

export const POST = route(queryPublicDashboard);
