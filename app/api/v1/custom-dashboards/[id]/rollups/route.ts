import { route } from "@/lib/api/route";
import { getDashboardRollups } from "@/lib/dashboards/operations";

export const GET = route(getDashboardRollups);
