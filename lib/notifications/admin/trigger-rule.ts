import "server-only";
import type { Principal } from "@/lib/access/roles";
import { withTenant } from "@/lib/db/tenant";
import { notFound, conflict } from "@/lib/errors";
import { QUEUES } from "@/lib/job-queue";
import { RULE_RUNS, insertRun, type EvaluateJob, type Runtime } from "@/lib/notifications/pipeline/runtime";

/** Manual trigger (rate limited at the route): one run now, outside the cadence. */
export async function triggerRule(principal: Principal, ruleId: string, rt: Runtime) {
  const now = rt.clock.now();
  const run = await withTenant(principal, async (tx) => {
    const rule = await tx.notificationRule.findUnique({ where: { id: ruleId } });
    if (!rule) throw notFound("Rule");
    if (!rule.enabled) throw conflict("The rule is disabled; enable it before triggering it");
    const id = await insertRun(tx, RULE_RUNS, principal.orgId, rule.id, now, "manual");
    if (!id) throw conflict("The rule was already triggered at this instant");
    return tx.notificationRuleRun.findUniqueOrThrow({ where: { id } });
  });
  await rt.queue.send(QUEUES.evaluate, { orgId: principal.orgId, runId: run.id } satisfies EvaluateJob);
  return { id: run.id, rule_id: run.ruleId, scheduled_for: run.scheduledFor, trigger: run.trigger, status: run.status };
}
