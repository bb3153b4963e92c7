import { route } from "@/lib/api/route";
import { deleteDashboard, getDashboard, updateDashboard } from "@/lib/dashboards/operations";

export const GET = route(getDashboard);
export const PUT = route(updateDashboard);
export const DELETE = route(deleteDashboard);
