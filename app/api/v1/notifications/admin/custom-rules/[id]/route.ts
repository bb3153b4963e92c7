import { route } from "@/lib/api/route";
import { getRuleEndpoint, updateRuleEndpoint } from "@/lib/notifications/contract";
import { systemClock } from "@/lib/notifications/clock";
import { getRule, updateRule } from "@/lib/notifications/admin/rules";

export const GET = route(getRuleEndpoint, ({ principal, params }) => getRule(principal, params.id, systemClock.now()));
export const PATCH = route(updateRuleEndpoint, ({ principal, params, body }) => updateRule(principal, params.id, body, systemClock.now()));
