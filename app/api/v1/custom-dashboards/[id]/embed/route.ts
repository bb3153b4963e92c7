import { route } from "@/lib/api/route";
import { embedDashboard } from "@/lib/dashboards/operations";

export const POST = route(embedDashboard);
