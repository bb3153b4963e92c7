import { route } from "@/lib/api/route";
import { snoozeAlert } from "@/lib/alerts/operations";

export const POST = route(snoozeAlert);
