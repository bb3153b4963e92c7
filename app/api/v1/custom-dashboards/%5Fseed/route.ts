// The folder is named %5Fseed because Next.js treats folders starting with "_" as private.
import { route } from "@/lib/api/route";
import { seedDashboards } from "@/lib/dashboards/operations";

export const POST = route(seedDashboards);
