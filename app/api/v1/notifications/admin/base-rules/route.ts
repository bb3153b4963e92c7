import { route } from "@/lib/api/route";
import { listBaseRules } from "@/lib/notifications/operations";

export const GET = route(listBaseRules);
