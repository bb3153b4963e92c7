import { route } from "@/lib/api/route";
import { listReportEmailGroups } from "@/lib/reports/schedules-operations";

export const GET = route(listReportEmailGroups);
