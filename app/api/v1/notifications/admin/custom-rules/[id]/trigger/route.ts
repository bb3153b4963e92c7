import { route } from "@/lib/api/route";
import { triggerRule } from "@/lib/notifications/operations";

export const POST = route(triggerRule);
