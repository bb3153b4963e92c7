import { route } from "@/lib/api/route";
import { createDashboard, listDashboards } from "@/lib/dashboards/operations";

export const GET = route(listDashboards);
export const POST = route(createDashboard);
