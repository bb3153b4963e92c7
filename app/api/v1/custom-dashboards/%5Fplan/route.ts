// The folder is named %5Fplan because Next.js treats folders starting with "_" as private.
import { route } from "@/lib/api/route";
import { planDashboards } from "@/lib/dashboards/plan-operations";

export const POST = route(planDashboards);
