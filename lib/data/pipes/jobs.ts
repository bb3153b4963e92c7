import "server-only";
import type PgBoss from "pg-boss";
import type { Principal } from "@/lib/access/roles";
import { findOrganization } from "@/lib/auth/directory";
import { getDb } from "@/lib/db/client";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import { notFound } from "@/lib/errors";
import { queueWith, type QueueDefinition } from "@/lib/job-queue";
import { log } from "@/lib/log";
import { systemClock, type Clock } from "@/lib/notifications/clock";
import { CHANNEL_UNUSABLE, channelRecipient, fanOut, type DeliveryTarget } from "@/lib/notifications/pipeline/fan-out";
import { insertRun, type RunTable, type Runtime } from "@/lib/notifications/pipeline/runtime";
import { latestDue } from "@/lib/notifications/settings/cron";
import { usableKinds } from "@/lib/notifications/settings/channels";
import { expireUploads } from "../uploads";
import { requireEveryLocation, toRunRecord } from "./pulls";
import { DEFAULT_PULL_TIME_LIMITS, runPullOnce, type PullTimeLimits, type RunOutcome } from "./run";

/*
 * Pulls as durable jobs (pg-boss, beside the notification pipeline's): a minute tick records each scheduled pull's
 * due occurrence as a run (the notification scheduler's insertRun: one run per pull and occurrence however many
 * workers tick) and queues it; a run job tries the pull, and a failed try is queued again later until the run fails
 * for good, when the organization's channels are told through the pipeline's one fan-out.
 */

export const PULL_QUEUES = { tick: "data.pulls.tick", run: "data.pulls.run" } as const;

const QUEUE_DEFINITIONS: QueueDefinition[] = [
  { name: PULL_QUEUES.tick, policy: "singleton", retryLimit: 0, expireInSeconds: 300 },
  // pg-boss retries a run only when its worker died or threw; a pull's own failure is rescheduled with its backoff.
  { name: PULL_QUEUES.run, retryLimit: 2, retryDelay: 60, retryBackoff: true, expireInSeconds: 3_600 },
];

export const PULL_RUNS: RunTable = { table: "data_pull_runs", ownerColumn: "pull_id", idPrefix: "dpr" };

/** A failed try is tried again after this, doubling with each attempt. */
const RETRY_BASE_SECONDS = 60;
/** Runs still queued this long after they were recorded were stranded (a crash between commit and enqueue). */
const STRANDED_MS = 10 * 60_000;

export interface PullRunJob {
  orgId: string;
  runId: string;
}

const pullQueue = () => queueWith(...QUEUE_DEFINITIONS);

async function organizationIds(): Promise<string[]> {
  const { system } = await getDb();
  return (await system.query<{ id: string }>("SELECT id FROM organizations ORDER BY id")).map((r) => r.id);
}

/**
 * How long an ingest batch's Idempotency-Key is remembered (docs/data.md "Pipelines"): a retry within it is answered
 * from the record, a batch sent later under the same key loads again. A week outlasts a pipeline's retries over a
 * weekend's outage; Stripe keeps its keys 24 hours.
 */
export const INGEST_KEY_TTL_MS = 7 * 86_400_000;

/**
 * One tick: each enabled, scheduled pull whose cron (read in its organization's time zone) has an occurrence since the
 * last one scheduled gets a run for the latest of them (missed occurrences collapse into it), queued after the commit.
 * Runs stranded in "queued" are queued again. Ingest keys older than INGEST_KEY_TTL_MS are forgotten (by the index
 * on (org_id, created_at): a tick that finds none costs one index probe per organization). Uploads older than
 * QUARRY_DATA_UPLOAD_TTL_HOURS are removed from object storage (expireUploads: one listing of the uploads' folder).
 */
export async function tickPulls(queue: Pick<PgBoss, "send">, now: Date): Promise<{ queued: number; recovered: number; expiredKeys: number; expiredUploads: number }> {
  let queued = 0;
  let recovered = 0;
  let expiredKeys = 0;
  for (const orgId of await organizationIds()) {
    const zone = (await findOrganization(orgId))?.timeZone ?? "UTC";
    const { due, stranded } = await withTenant({ orgId }, async (tx) => {
      const pulls = await tx.dataPull.findMany({ where: { paused: false, cron: { not: null } } });
      const due: string[] = [];
      for (const pull of pulls) {
        const at = latestDue(pull.cron!, now, pull.lastScheduledFor ?? pull.createdAt, zone);
        if (!at) continue;
        const id = await insertRun(tx, PULL_RUNS, orgId, pull.id, at, "cron");
        await tx.dataPull.update({ where: { id: pull.id }, data: { lastScheduledFor: at } });
        if (id) due.push(id);
      }
      const stranded = await tx.dataPullRun.findMany({
        where: { status: "queued", attempts: 0, createdAt: { lt: new Date(now.getTime() - STRANDED_MS), gt: new Date(now.getTime() - 86_400_000) } },
        select: { id: true },
      });
      expiredKeys += await tx.$executeRaw`DELETE FROM data_ingest_batches WHERE created_at < ${new Date(now.getTime() - INGEST_KEY_TTL_MS)}`;
      return { due, stranded: stranded.map((r) => r.id) };
    });
    for (const runId of [...due, ...stranded]) await queue.send(PULL_QUEUES.run, { orgId, runId } satisfies PullRunJob);
    queued += due.length;
    recovered += stranded.length;
  }
  // Upkeep, not the tick's work: storage that cannot be listed now is tried again at the next tick.
  const expiredUploads = await expireUploads(now).catch((error: unknown) => {
    log.warn("expired uploads were not removed", { error: (error as Error).message });
    return 0;
  });
  return { queued, recovered, expiredKeys, expiredUploads };
}

/** "Run now": a manual run recorded and queued; the run as recorded. */
export async function requestPullRun(principal: Principal, pullId: string) {
  requireEveryLocation(principal);
  const orgId = principal.orgId;
  const run = await withTenant({ orgId }, async (tx) => {
    if (!(await tx.dataPull.findUnique({ where: { id: pullId }, select: { id: true } }))) throw notFound("Pull");
    const at = new Date();
    const id = (await insertRun(tx, PULL_RUNS, orgId, pullId, at, "manual")) ?? (await tx.dataPullRun.findFirstOrThrow({ where: { pullId, scheduledFor: at } })).id;
    return tx.dataPullRun.findUniqueOrThrow({ where: { id } });
  });
  const boss = await pullQueue();
  await boss.send(PULL_QUEUES.run, { orgId, runId: run.id } satisfies PullRunJob);
  return toRunRecord(run);
}

/** One run job: a try of the pull; a failed try queued again with backoff, a run failed for good told to the organization. */
export async function handlePullRun(rt: Runtime, job: PullRunJob, limits: PullTimeLimits = DEFAULT_PULL_TIME_LIMITS): Promise<RunOutcome["state"]> {
  const outcome = await runPullOnce(job.orgId, job.runId, limits);
  if (outcome.state === "retry") {
    const attempts = (await withTenant({ orgId: job.orgId }, (tx) => tx.dataPullRun.findUnique({ where: { id: job.runId }, select: { attempts: true } })))?.attempts ?? 1;
    const startAfter = new Date(rt.clock.now().getTime() + RETRY_BASE_SECONDS * 2 ** (attempts - 1) * 1_000);
    await rt.queue.send(PULL_QUEUES.run, job, { startAfter });
  }
  if (outcome.state === "failed") await notifyFailure(rt, job.orgId, job.runId);
  return outcome.state;
}

/**
 * The failure notice, through the notification pipeline's fan-out: the admins in the app and by e-mail, and the
 * organization's Slack and webhook channels, each only when usable. One notice per run (a redelivered job finds the
 * run's deliveries and sends nothing); a pull failing at every occurrence is told once per dedupe window.
 */
export async function notifyFailure(rt: Runtime, orgId: string, runId: string): Promise<number> {
  return fanOut(rt, orgId, rt.clock.now(), async (tx) => {
    if ((await tx.notificationDelivery.count({ where: { pullRunId: runId } })) > 0) return null;
    const run = await tx.dataPullRun.findUnique({ where: { id: runId } });
    const pull = run && (await tx.dataPull.findUnique({ where: { id: run.pullId } }));
    if (!run || !pull) return null;
    return {
      origin: { pullRunId: runId },
      subject: `Data pull "${pull.name}" failed`,
      body: `The pull "${pull.name}" into table ${pull.tableName} failed after ${run.attempts} attempts; the table keeps its previous rows.\n\n${run.error ?? ""}`,
      severity: "warning",
      dedupeKey: `data-pull:${pull.id}`,
      targets: await failureTargets(tx, orgId),
    };
  });
}

async function failureTargets(tx: TenantTx, orgId: string): Promise<DeliveryTarget[]> {
  const usable = await usableKinds(tx);
  const admins = await tx.user.findMany({ where: { role: "admin" }, select: { id: true, email: true }, orderBy: { id: "asc" } });
  const targets: DeliveryTarget[] = [];
  for (const channel of ["in_app", "email", "slack", "webhook"] as const) {
    if (!usable.has(channel)) {
      targets.push({ channel, recipient: "-", skipReason: CHANNEL_UNUSABLE });
      continue;
    }
    if (channel === "in_app") for (const a of admins) targets.push({ channel, recipient: a.id });
    if (channel === "email") for (const a of admins) targets.push({ channel, recipient: a.email.toLowerCase() });
    if (channel === "slack" || channel === "webhook") targets.push({ channel, recipient: await channelRecipient(tx, orgId, channel) });
  }
  return targets;
}

/** Consumes the pull queues where the worker runs (the web process with in_process_worker, or `npm run worker`) and ticks every minute. */
export async function startPullWorker(clock: Clock = systemClock): Promise<void> {
  const boss = await pullQueue();
  const rt: Runtime = { clock, queue: boss };
  await boss.work<PullRunJob>(PULL_QUEUES.run, { batchSize: 1, pollingIntervalSeconds: 2 }, async (jobs) => {
    for (const job of jobs) await handlePullRun(rt, job.data);
  });
  await boss.work(PULL_QUEUES.tick, { batchSize: 1, pollingIntervalSeconds: 5 }, async () => {
    await tickPulls(boss, clock.now());
  });
  await boss.schedule(PULL_QUEUES.tick, "* * * * *", {}, { tz: "UTC" });
  log.info("data pull worker started", { queues: Object.values(PULL_QUEUES) });
}

/**
 * A tick at the clock's time, then every run job due now, until none is left: `npm run worker -- --once`, and tests.
 * A handler that throws fails its job, which pg-boss retries. Answers how many tries ran (a job whose run had
 * already finished counts for nothing).
 */
export async function drainPullQueue(clock: Clock = systemClock, limits: PullTimeLimits = DEFAULT_PULL_TIME_LIMITS): Promise<number> {
  const boss = await pullQueue();
  const rt: Runtime = { clock, queue: boss };
  await tickPulls(boss, clock.now());
  let done = 0;
  for (;;) {
    const jobs = await boss.fetch<PullRunJob>(PULL_QUEUES.run, { batchSize: 5 });
    if (jobs.length === 0) return done;
    for (const job of jobs) {
      try {
        if ((await handlePullRun(rt, job.data, limits)) !== "skipped") done++;
        await boss.complete(PULL_QUEUES.run, job.id);
      } catch (error) {
        await boss.fail(PULL_QUEUES.run, job.id, { message: (error as Error).message });
        done++;
      }
    }
  }
}
