import { route } from "@/lib/api/route";
import { publishDashboard } from "@/lib/dashboards/operations";

export const POST = route(publishDashboard);
