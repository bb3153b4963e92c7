import "server-only";
import { log } from "@/lib/log";
import { queueWith, type QueueDefinition } from "@/lib/job-queue";
import { refreshOrganizationRollups } from "./build";

/**
 * Rollup refreshes as durable jobs (pg-boss, like document indexing): one job per organization
 * refreshes every rollup it declares, skipping those still fresh. Sent when a dashboard version is
 * published (its rollups are declared in the same transaction) and when a query finds a declared
 * rollup stale (the warehouse changed since it was built): meanwhile the tables answer.
 */
export const ROLLUP_QUEUE = "dashboards.rollups";

export interface RollupJobData {
  orgId: string;
}

// stately: one job waiting and one running per organization (singletonKey); more sends in between are the same work.
const ROLLUP_QUEUE_DEFINITION: QueueDefinition = { name: ROLLUP_QUEUE, policy: "stately", retryLimit: 3, retryDelay: 30, retryBackoff: true, expireInSeconds: 900 };

const rollupQueue = () => queueWith(ROLLUP_QUEUE_DEFINITION);

/** When this process last asked for an organization's refresh: a page of viewers on a stale rollup sends one job, not one per request. */
const lastSent = new Map<string, number>();
const RESEND_AFTER_MS = 30_000;

/** Asks the worker to refresh an organization's rollups; a failure is only logged (the tables answer meanwhile, and the next query asks again). */
export async function sendRollupRefresh(orgId: string, options: { startAfterSeconds?: number; always?: boolean } = {}): Promise<void> {
  const sent = lastSent.get(orgId);
  if (!options.always && sent !== undefined && Date.now() - sent < RESEND_AFTER_MS) return;
  lastSent.set(orgId, Date.now());
  try {
    const boss = await rollupQueue();
    await boss.send(ROLLUP_QUEUE, { orgId } satisfies RollupJobData, { singletonKey: orgId, startAfter: options.startAfterSeconds ?? 0 });
  } catch (error) {
    lastSent.delete(orgId);
    log.warn("rollup refresh not queued", { orgId, error: String(error) });
  }
}

async function runRollupJob({ orgId }: RollupJobData): Promise<void> {
  const outcomes = await refreshOrganizationRollups(orgId);
  const built = outcomes.filter((o) => o.state !== "skipped");
  if (built.length > 0) log.info("rollups refreshed", { orgId, rollups: built.map((o) => ({ name: o.name, state: o.state, buckets: o.bucketsWritten, rows: o.rows, ms: Math.round(o.ms), error: o.error })) });
}

/** Consumes the rollup queue where the worker runs (the web process with in_process_worker, or `npm run worker`). */
export async function startRollupWorker(): Promise<void> {
  const boss = await rollupQueue();
  await boss.work<RollupJobData>(ROLLUP_QUEUE, { batchSize: 1, pollingIntervalSeconds: 2 }, async (jobs) => {
    for (const job of jobs) await runRollupJob(job.data);
  });
  log.info("rollup worker started", { queue: ROLLUP_QUEUE });
}

/** Runs every rollup job that is due now (tests; `npm run worker -- --once`). */
export async function drainRollupQueue(): Promise<number> {
  const boss = await rollupQueue();
  let done = 0;
  for (;;) {
    const jobs = await boss.fetch<RollupJobData>(ROLLUP_QUEUE, { batchSize: 5 });
    if (jobs.length === 0) return done;
    for (const job of jobs) {
      try {
        await runRollupJob(job.data);
        await boss.complete(ROLLUP_QUEUE, job.id);
        done++;
      } catch (error) {
        await boss.fail(ROLLUP_QUEUE, job.id, { message: (error as Error).message });
      }
    }
  }
}
