import { route } from "@/lib/api/route";
import { createDashboard, listDashboards } from "@/lib/dashboards/contract";
import * as dashboards from "@/lib/dashboards/service";

export const GET = route(listDashboards, ({ principal, query }) => dashboards.listDashboards(principal, query));
export const POST = route(createDashboard, ({ principal, body }) => dashboards.createDashboard(principal, body));
