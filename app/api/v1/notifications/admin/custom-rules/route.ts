import { route } from "@/lib/api/route";
import { createRuleEndpoint, listRulesEndpoint } from "@/lib/notifications/contract";
import { systemClock } from "@/lib/notifications/clock";
import { createRule, listRules } from "@/lib/notifications/admin/rules";

export const GET = route(listRulesEndpoint, ({ principal, query }) => listRules(principal, query, systemClock.now()));
export const POST = route(createRuleEndpoint, ({ principal, body }) => createRule(principal, body, systemClock.now()));
