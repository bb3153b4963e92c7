import { route } from "@/lib/api/route";
import { exportDashboard } from "@/lib/reports/export-operations";

export const GET = route(exportDashboard);
