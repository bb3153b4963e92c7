import { route } from "@/lib/api/route";
import { publishDashboard } from "@/lib/dashboards/contract";
import * as dashboards from "@/lib/dashboards/service";

export const POST = route(publishDashboard, ({ principal, params }) => dashboards.publishDashboard(principal, params.id));
