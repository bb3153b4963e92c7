import { route } from "@/lib/api/route";
import { deleteReportSchedule, getReportSchedule, updateReportSchedule } from "@/lib/reports/schedules-operations";

export const GET = route(getReportSchedule);
export const PATCH = route(updateReportSchedule);
export const DELETE = route(deleteReportSchedule);
