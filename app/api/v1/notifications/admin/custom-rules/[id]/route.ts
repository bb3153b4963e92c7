import { route } from "@/lib/api/route";
import { getRule, updateRule } from "@/lib/notifications/operations";

export const GET = route(getRule);
export const PATCH = route(updateRule);
