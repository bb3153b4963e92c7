// The folder is named %5Fapply because Next.js treats folders starting with "_" as private.
import { route } from "@/lib/api/route";
import { applyDashboards } from "@/lib/dashboards/plan-operations";

export const POST = route(applyDashboards);
