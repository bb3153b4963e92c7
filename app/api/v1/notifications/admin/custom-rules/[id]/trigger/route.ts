import { route } from "@/lib/api/route";
import { triggerRuleEndpoint } from "@/lib/notifications/contract";
import { triggerRule } from "@/lib/notifications/admin/trigger-rule";
import { defaultRuntime } from "@/lib/notifications/pipeline/worker";

export const POST = route(triggerRuleEndpoint, async ({ principal, params }) => triggerRule(principal, params.id, await defaultRuntime()));
