import "server-only";
import { auditConfig } from "@/lib/config/audit";
import { getDb } from "@/lib/db/client";
import { queueWith, type QueueDefinition } from "@/lib/job-queue";
import { log } from "@/lib/log";

/**
 * Retention of the audit log: rows older than QUARRY_AUDIT_RETENTION_DAYS are removed by a daily job on the job
 * queue. It is the one place that deletes audit rows: it runs as the connecting login, the table's owner, which
 * the append-only trigger lets through (migration 0047); the application's role holds no DELETE on the table.
 */
export const AUDIT_RETENTION_QUEUE = "audit.retention";

// singleton: one run at a time; a missed day is simply done by the next run.
const RETENTION_QUEUE: QueueDefinition = { name: AUDIT_RETENTION_QUEUE, policy: "singleton", retryLimit: 2, retryDelay: 300, expireInSeconds: 1800 };

const retentionQueue = () => queueWith(RETENTION_QUEUE);

/** Removes every organization's audit rows older than `days` before `now`; answers how many went. */
export async function removeExpiredAuditRows(now = new Date(), days = auditConfig().retentionDays): Promise<number> {
  const cutoff = new Date(now.getTime() - days * 86_400_000);
  const { system } = await getDb();
  const [{ removed }] = await system.query<{ removed: number }>(
    "WITH gone AS (DELETE FROM audit_events WHERE occurred_at < $1 RETURNING 1) SELECT count(*)::int AS removed FROM gone",
    [cutoff.toISOString()],
  );
  if (removed > 0) log.info("audit rows past retention removed", { removed, days, cutoff: cutoff.toISOString() });
  return removed;
}

/** Consumes the retention queue where the worker runs and schedules it daily (03:17 UTC, away from the hour's other jobs). */
export async function startAuditRetentionWorker(): Promise<void> {
  const boss = await retentionQueue();
  await boss.work(AUDIT_RETENTION_QUEUE, { batchSize: 1, pollingIntervalSeconds: 60 }, async () => void (await removeExpiredAuditRows()));
  await boss.schedule(AUDIT_RETENTION_QUEUE, "17 3 * * *", {}, { tz: "UTC" });
  log.info("audit retention worker started", { queue: AUDIT_RETENTION_QUEUE, days: auditConfig().retentionDays });
}

/** Runs the retention job if one is due (`npm run worker -- --once`, tests): sends one, then works what is queued. */
export async function drainAuditRetentionQueue(): Promise<number> {
  const boss = await retentionQueue();
  await boss.send(AUDIT_RETENTION_QUEUE, {});
  let removed = 0;
  for (;;) {
    const jobs = await boss.fetch(AUDIT_RETENTION_QUEUE, { batchSize: 1 });
    if (jobs.length === 0) return removed;
    for (const job of jobs) {
      try {
        removed += await removeExpiredAuditRows();
        await boss.complete(AUDIT_RETENTION_QUEUE, job.id);
      } catch (error) {
        await boss.fail(AUDIT_RETENTION_QUEUE, job.id, { message: (error as Error).message });
      }
    }
  }
}
