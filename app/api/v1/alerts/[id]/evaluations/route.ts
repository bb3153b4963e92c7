import { route } from "@/lib/api/route";
import { listAlertEvaluations } from "@/lib/alerts/operations";

export const GET = route(listAlertEvaluations);
