// Worker: consumes the pg-boss queues (rule evaluation on cron cadence,
// deliveries with retries, document indexing jobs, rollup refreshes, data pulls) beside a server database (DATABASE_URL).
// `--once` runs every due job and exits (for a cron-driven deployment).
import { closeDb, getDb } from "@/lib/db/client";
import { log } from "@/lib/log";
import { systemClock } from "@/lib/notifications/clock";
import { closeQueue, getQueue } from "@/lib/job-queue";
import { drainQueues, startNotificationWorker } from "@/lib/worker";
import { vacuumDueTables } from "@/lib/documents/indexing/housekeeping";
import { drainIndexQueue, sweepIndexRequests, startIndexWorker } from "@/lib/documents/indexing/index-jobs";
import { drainRollupQueue, startRollupWorker } from "@/lib/rollups/jobs";
import { drainPullQueue, startPullWorker } from "@/lib/data/pipes/jobs";
import { drainAuditRetentionQueue, startAuditRetentionWorker } from "@/lib/audit/retention";

if (process.argv.includes("--once")) {
  const processed = await drainQueues({ clock: systemClock, queue: await getQueue(true) });
  log.info("notification jobs drained", { processed });
  await sweepIndexRequests();
  log.info("index jobs drained", await drainIndexQueue());
  log.info("rollup jobs drained", { processed: await drainRollupQueue() });
  log.info("data pull jobs drained", { processed: await drainPullQueue() });
  log.info("audit retention", { removed: await drainAuditRetentionQueue() });
  // A cron-driven embedded deployment has no worker timer: reclaim what the drained runs left (nothing on a server).
  const db = await getDb();
  if (db.kind === "pglite") log.info("embedded housekeeping", { vacuumed: await vacuumDueTables(db) });
  await closeQueue();
  await closeDb();
} else {
  await startNotificationWorker();
  await startIndexWorker();
  await startRollupWorker();
  await startPullWorker();
  await startAuditRetentionWorker();
  const stop = async (signal: string) => {
    log.info("notification worker stopping", { signal });
    await closeQueue();
    await closeDb();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
}
