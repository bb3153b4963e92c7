// The folder is named %5Fseed because Next.js treats folders starting with "_" as private.
import { route } from "@/lib/api/route";
import { seedDashboards } from "@/lib/dashboards/contract";
import { seedSampleDashboard } from "@/lib/dashboards/service";

export const POST = route(seedDashboards, ({ principal }) => seedSampleDashboard(principal));
