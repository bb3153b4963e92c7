import { route } from "@/lib/api/route";
import { deleteDashboard, getDashboard, updateDashboard } from "@/lib/dashboards/contract";
import * as dashboards from "@/lib/dashboards/service";

export const GET = route(getDashboard, ({ principal, params }) => dashboards.getDashboard(principal, params.id));
export const PUT = route(updateDashboard, ({ principal, params, body }) => dashboards.updateDashboard(principal, params.id, body));
export const DELETE = route(deleteDashboard, ({ principal, params }) => dashboards.deleteDashboard(principal, params.id));
