import { route } from "@/lib/api/route";
import { createAlert, listAlerts } from "@/lib/alerts/operations";

export const GET = route(listAlerts);
export const POST = route(createAlert);
