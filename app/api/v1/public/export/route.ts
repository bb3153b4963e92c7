import { route } from "@/lib/api/route";
import { exportPublicDashboard } from "@/lib/reports/export-operations";

export const GET = route(exportPublicDashboard);
