import { route } from "@/lib/api/route";
import { downloadReportFile } from "@/lib/reports/schedules-operations";

export const GET = route(downloadReportFile);
