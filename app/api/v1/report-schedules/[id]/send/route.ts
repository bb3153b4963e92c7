import { route } from "@/lib/api/route";
import { sendReportSchedule } from "@/lib/reports/schedules-operations";

export const POST = route(sendReportSchedule);
