import { route } from "@/lib/api/route";
import { queryDashboard } from "@/lib/dashboards/contract";
import * as query from "@/lib/dashboards/query";

export const POST = route(queryDashboard, ({ principal, params, body }) => query.queryDashboard(principal, params.id, body));
