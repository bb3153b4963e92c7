import "server-only";
import { QUEUES, getQueue } from "@/lib/job-queue";
import { log } from "@/lib/log";
import type { AlertEvaluateJob, AlertHooks } from "@/lib/notifications/pipeline/runtime";
import { evaluateDueAlerts, evaluateOnDataChange } from "./alerts";
import { alertDelivery, deliveryPicture } from "./delivery";

/**
 * How widget alerts ride the notification pipeline, handed to it by the worker (lib/worker.ts). Cadence: every
 * minute the tick queues one evaluation of an organization's cron alerts (each alert's cron read in the
 * organization's time zone; the evaluation takes those due), and one of its data-change alerts when its warehouse
 * version has moved since this process last heard it (migration 0036's counter, which every write to a warehouse
 * table bumps, and a load into an organization's own table too), or a data-change alert was made or edited since; a
 * caller that wants it at once calls alertsOnDataChange (no load does yet). An occurrence is evaluated once however
 * often it is queued: its evaluations are keyed by it (lib/alerts/state.ts), so a second hearing records and sends nothing.
 */

/** The warehouse version (and data-change alerts) each organization's evaluation was last queued for, in this process. */
const heard = new Map<string, string>();

export const alertHooks: AlertHooks = {
  async schedule(tx, orgId) {
    const kinds = await tx.widgetAlert.findMany({ distinct: ["cadenceKind"], select: { cadenceKind: true } });
    const jobs: AlertEvaluateJob[] = [];
    if (kinds.some((k) => k.cadenceKind === "cron")) jobs.push({ orgId, trigger: "cron" });
    if (kinds.some((k) => k.cadenceKind === "on_data_change")) {
      const [warehouse, alerts] = await Promise.all([
        tx.warehouseVersion.findUnique({ where: { orgId }, select: { version: true } }),
        tx.widgetAlert.aggregate({ where: { cadenceKind: "on_data_change" }, _count: true, _max: { updatedAt: true } }),
      ]);
      const change = `warehouse:${warehouse?.version ?? 0}`;
      // A new or edited alert is heard at once on the data as it is: it need not wait for the next change.
      const heardAs = `${change} ${alerts._count} ${alerts._max.updatedAt?.toISOString() ?? ""}`;
      if (heard.get(orgId) !== heardAs) {
        heard.set(orgId, heardAs);
        jobs.push({ orgId, trigger: "data_change", change });
      }
    }
    return jobs;
  },

  async evaluate(rt, job) {
    const deliver = alertDelivery(rt);
    const now = rt.clock.now();
    if (job.trigger === "cron") await evaluateDueAlerts(job.orgId, now, deliver);
    else await evaluateOnDataChange(job.orgId, job.change, now, deliver);
  },

  message: deliveryPicture,
};

/**
 * The hook a table load (or any other change to what dashboards read) calls: queues an evaluation of the
 * organization's data-change alerts for this change, named by the caller (e.g. `load:<id>`) so that handing the same
 * change over twice evaluates it once. A failure to queue is logged, not thrown: the load succeeded.
 */
export async function alertsOnDataChange(orgId: string, changeId: string): Promise<void> {
  try {
    const queue = await getQueue();
    await queue.send(QUEUES.alerts, { orgId, trigger: "data_change", change: changeId } satisfies AlertEvaluateJob);
  } catch (error) {
    log.warn("data-change alert evaluation not queued", { orgId, changeId, error: String(error) });
  }
}
