import { route } from "@/lib/api/route";
import { createRule, listRules } from "@/lib/notifications/operations";

export const GET = route(listRules);
export const POST = route(createRule);
