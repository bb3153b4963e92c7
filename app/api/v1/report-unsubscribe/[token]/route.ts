import { route } from "@/lib/api/route";
import { unsubscribeReport } from "@/lib/reports/schedules-operations";

export const POST = route(unsubscribeReport);
