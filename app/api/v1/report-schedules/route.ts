import { route } from "@/lib/api/route";
import { createReportSchedule, listReportSchedules } from "@/lib/reports/schedules-operations";

export const GET = route(listReportSchedules);
export const POST = route(createReportSchedule);
