import "server-only";
import { getDb } from "@/lib/db/client";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import { latestDue } from "@/lib/notifications/settings/cron";
import { QUEUES } from "@/lib/job-queue";
import { RULE_RUNS, insertRun, type DeliverJob, type EvaluateJob, type ReportRunJob, type Runtime } from "@/lib/notifications/pipeline/runtime";

/** Deliveries or runs whose job should have run this long ago are re-queued by the tick (a crash between commit and enqueue). */
const STRANDED_MS = 10 * 60_000;

/** Organizations with rules to schedule; the queue runs outside any tenant, so it reads the registry with the connecting role. */
async function organizationIds(): Promise<string[]> {
  const { system } = await getDb();
  return (await system.query<{ id: string }>("SELECT id FROM organizations ORDER BY id")).map((r) => r.id);
}

/**
 * One scheduler tick (pg-boss runs it every minute): for every enabled rule
 * (and, through the hooks the worker gives it, every report schedule and the widget alerts due)
 * whose cron has an occurrence since the last one scheduled, record a run for
 * that occurrence and queue its evaluation (or rendering). Missed occurrences
 * collapse into the latest. The unique (rule or schedule, occurrence) key makes
 * concurrent ticks on several workers queue each occurrence once.
 */
export async function tick(rt: Runtime): Promise<{ queued: number; recovered: number }> {
  const now = rt.clock.now();
  let queued = 0;
  let recovered = 0;
  for (const orgId of await organizationIds()) {
    const { runs, reports, alerts, stranded } = await withTenant({ orgId }, async (tx) => {
      const rules = await tx.notificationRule.findMany({ where: { enabled: true } });
      const created: string[] = [];
      for (const rule of rules) {
        const due = latestDue(rule.cadenceCron, now, rule.lastScheduledFor ?? rule.createdAt);
        if (!due) continue;
        const id = await insertRun(tx, RULE_RUNS, orgId, rule.id, due, "cron");
        await tx.notificationRule.update({ where: { id: rule.id }, data: { lastScheduledFor: due } });
        if (id) created.push(id);
      }
      const window = strandedWindow(now);
      const reports = (await rt.reports?.schedule(tx, orgId, now, window)) ?? { due: [], stranded: [] };
      const alerts = (await rt.alerts?.schedule(tx, orgId, now)) ?? [];
      return { runs: created, reports, alerts, stranded: await strandedWork(tx, now, window) };
    });
    for (const job of alerts) await rt.queue.send(QUEUES.alerts, job);
    for (const runId of reports.due) await rt.queue.send(QUEUES.report, { orgId, runId } satisfies ReportRunJob);
    for (const runId of runs) await rt.queue.send(QUEUES.evaluate, { orgId, runId } satisfies EvaluateJob);
    for (const runId of stranded.runs) await rt.queue.send(QUEUES.evaluate, { orgId, runId } satisfies EvaluateJob);
    for (const runId of reports.stranded) await rt.queue.send(QUEUES.report, { orgId, runId } satisfies ReportRunJob);
    for (const d of stranded.deliveries) await rt.queue.send(QUEUES.deliver, { orgId, deliveryId: d.id, attempt: d.attempts + 1 } satisfies DeliverJob);
    queued += runs.length + reports.due.length;
    recovered += stranded.runs.length + reports.stranded.length + stranded.deliveries.length;
  }
  return { queued, recovered };
}

/** Work created in this window and still waiting was stranded: older than STRANDED_MS, younger than a day (long superseded then). */
function strandedWindow(now: Date) {
  return { lt: new Date(now.getTime() - STRANDED_MS), gt: new Date(now.getTime() - 86_400_000) };
}

async function strandedWork(tx: TenantTx, now: Date, window: { gt: Date; lt: Date }) {
  const cutoff = window.lt;
  const runs = await tx.notificationRuleRun.findMany({ where: { status: "queued", createdAt: window }, select: { id: true } });
  const deliveries = await tx.notificationDelivery.findMany({
    where: {
      OR: [
        { status: { in: ["pending", "retrying"] }, nextAttemptAt: { lt: cutoff } },
        { status: "sending", updatedAt: { lt: cutoff }, nextAttemptAt: { lt: cutoff } },
      ],
    },
    select: { id: true, attempts: true },
  });
  if (deliveries.length > 0) await tx.notificationDelivery.updateMany({ where: { id: { in: deliveries.map((d) => d.id) } }, data: { nextAttemptAt: now } });
  return { runs: runs.map((r) => r.id), deliveries };
}
