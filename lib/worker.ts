import "server-only";
import type PgBoss from "pg-boss";
import { log } from "@/lib/log";
import { systemClock, type Clock } from "@/lib/notifications/clock";
import { deliver } from "@/lib/notifications/pipeline/deliver";
import { evaluateRun } from "@/lib/notifications/pipeline/evaluate";
import { tick } from "@/lib/notifications/pipeline/scheduler";
import { type AlertEvaluateJob, type DeliverJob, type EvaluateJob, type ReportRunJob, type Runtime } from "@/lib/notifications/pipeline/runtime";
import { QUEUES, getQueue } from "@/lib/job-queue";
import { alertHooks } from "@/lib/alerts/pipeline-hooks";
import { reportHooks } from "@/lib/reports/pipeline-hooks";

/*
 * The worker: the notification pipeline's queues with the scheduled reports and widget alerts that ride them. It sits
 * above all three (reports and alerts use the pipeline; the pipeline reaches them only through the hooks given here),
 * so none imports another's way up.
 */

/** Job handlers by queue; each resolves to whether it did its work or deferred the job to a later time. */
function handlers(given: Runtime): Record<string, (data: object) => Promise<"done" | "deferred">> {
  const rt: Runtime = { reports: reportHooks, alerts: alertHooks, ...given };
  return {
    [QUEUES.tick]: async () => (await tick(rt), "done"),
    [QUEUES.evaluate]: async (data) => (await evaluateRun(rt, data as EvaluateJob), "done"),
    [QUEUES.report]: async (data) => (await reportHooks.run(rt, data as ReportRunJob), "done"),
    [QUEUES.alerts]: async (data) => (await alertHooks.evaluate(rt, data as AlertEvaluateJob), "done"),
    [QUEUES.deliver]: (data) => deliver(rt, data as DeliverJob),
  };
}

/**
 * Starts consuming the notification queues and schedules the minute tick
 * (pg-boss cron). Called once per worker process: the web process in the
 * embedded default, `npm run worker` beside a server database.
 */
export async function startNotificationWorker(clock: Clock = systemClock): Promise<PgBoss> {
  const boss = await getQueue(true);
  const rt: Runtime = { clock, queue: boss };
  for (const [name, handle] of Object.entries(handlers(rt))) {
    await boss.work<object>(name, { batchSize: 5, pollingIntervalSeconds: 2 }, async (jobs) => {
      for (const job of jobs) await handle(job.data);
    });
  }
  await boss.schedule(QUEUES.tick, "* * * * *", {}, { tz: "UTC" });
  log.info("notification worker started", { queues: Object.values(QUEUES) });
  return boss;
}

/**
 * Runs every job that is due now, queue by queue, until a round does no work
 * (jobs created while draining included): `npm run worker -- --once`, and
 * tests, whose clock is not the database's. A handler that throws fails its
 * job, which pg-boss retries.
 */
export async function drainQueues(rt: Runtime & { queue: PgBoss }): Promise<number> {
  const handle = handlers(rt);
  let processed = 0;
  for (;;) {
    let round = 0;
    for (const name of [QUEUES.tick, QUEUES.evaluate, QUEUES.report, QUEUES.alerts, QUEUES.deliver]) {
      for (const job of await rt.queue.fetch<object>(name, { batchSize: 20 })) {
        try {
          if ((await handle[name](job.data)) === "done") round += 1;
          await rt.queue.complete(name, job.id);
        } catch (error) {
          log.error("notification job failed", { queue: name, jobId: job.id, error: (error as Error).message });
          await rt.queue.fail(name, job.id, { message: (error as Error).message });
          round += 1;
        }
      }
    }
    processed += round;
    if (round === 0) return processed;
  }
}
