import "server-only";
import type PgBoss from "pg-boss";
import type { Principal } from "@/lib/access/roles";
import { indexingSettings } from "@/lib/config/indexing";
import { getDb } from "@/lib/db/client";
import { withTenant } from "@/lib/db/tenant";
import { Conflict, DomainError, Invalid, NotFound, Unavailable, conflict, notFound } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { log } from "@/lib/log";
import { getQueue, queueWith, type QueueDefinition } from "@/lib/job-queue";
import { startEmbeddedHousekeeping } from "./housekeeping";
import { INDEX_TIMEOUT_MS, IndexBusy, RequestNotPending, indexDocument, indexJobRunning, liveRunSql } from "./index-document";
import { requestDeferred, requestFailed, requestRecorded, requestRetrying } from "./index-state";
import { toDocumentRecord } from "../document-record";

/**
 * Indexing as a job (issue 28 §1, docs/search.md "Index jobs"). A document's pending index request lives on
 * its row (index_request_id: written with the upload or the index request, so it is as durable as the file);
 * a pg-boss job on `documents.index` runs it. A job whose request is no longer pending does nothing, so a
 * job retried, duplicated or re-sent by the sweep never indexes a document twice for one request.
 */
export const INDEX_QUEUE = "documents.index";
/** Every minute: re-sends the job of a request whose job was lost (crash between commit and send, a killed worker). */
export const INDEX_SWEEP_QUEUE = "documents.index-sweep";

/**
 * Retry and concurrency policy of index jobs: attempts, back-off and the per-organization limit come from the
 * configuration (DOCUMENT_INDEX_*, lib/config/indexing.ts; read when this module loads). Mutable for tests only.
 */
export const indexJobPolicy = {
  /** Attempts per request before it is given up (failed, the dead-letter state, with the reason). */
  maxAttempts: indexingSettings().maxAttempts,
  /** Back-off after failed attempt n: base × 2^(n-1), capped. */
  backoffBaseMs: indexingSettings().backoffBaseMs,
  backoffMaxMs: indexingSettings().backoffMaxMs,
  /** Runs at a time per organization (all workers together); further jobs wait. */
  perOrgConcurrency: indexingSettings().perOrgConcurrency,
  /** How long a job that found its organization at the limit (or its document owned by a run) waits to try again. */
  busyDelayMs: 5_000,
  /** A pending request that has been due this long without a live run gets its job sent again by the sweep. */
  strandedMs: 2 * 60_000,
};

export interface IndexJobData {
  orgId: string;
  documentId: string;
  requestId: string;
}

/** What a job did: indexed; nothing to do (request done, replaced or withdrawn); waiting; failed and retried later; given up. */
export type IndexJobOutcome = "done" | "nothing" | "deferred" | "retrying" | "failed";

/** Jobs act for the organization with the admin role; no user is behind them. */
const jobPrincipal = (orgId: string): Principal => ({ userId: "system:indexer", orgId, orgSlug: "", orgName: "", role: "admin", locationIds: null, via: "bearer" });

// ---- the queue --------------------------------------------------------------

const INDEX_QUEUES: QueueDefinition[] = [
  // pg-boss retries a job only when its handler crashed or the worker died (the job's lease, expireInSeconds, runs out);
  // indexing failures are retried by runIndexJob with its own back-off and attempt count.
  { name: INDEX_QUEUE, retryLimit: 3, retryDelay: 30, retryBackoff: true, expireInSeconds: Math.ceil(INDEX_TIMEOUT_MS / 1000) + 120 },
  { name: INDEX_SWEEP_QUEUE, policy: "singleton", retryLimit: 0, expireInSeconds: 300 },
];

/**
 * The process's pg-boss (lib/job-queue.ts) with the documents queues created. Opened with maintenance where the
 * worker runs (`in_process_worker`), as every caller of getQueue() does: its first caller decides, and the
 * start-up's demo documents are indexed before the workers start.
 */
export const indexQueue = () => queueWith(...INDEX_QUEUES);

/** Sends the job of a request; a failure is only logged: the request is on the row and the sweep sends it again. */
export async function sendIndexJob(data: IndexJobData, startAfter?: Date): Promise<void> {
  try {
    const boss = await indexQueue();
    await boss.send(INDEX_QUEUE, data, startAfter ? { startAfter } : {});
  } catch (error) {
    log.warn("index job not queued; the sweep will queue it", { documentId: data.documentId, error: String(error) });
  }
}

// ---- requests ---------------------------------------------------------------

/**
 * Requests the indexing of a document's current file and queues its job; answers the request id.
 * 404 unknown (or another organization's), 409 no file, or (whileRunning "refuse") a run owns the document.
 */
export async function requestIndex(
  principal: Principal,
  documentId: string,
  options: { model?: string | null; whileRunning?: "refuse" | "queue"; sendJob?: boolean } = {},
): Promise<string> {
  const requestId = newId("idx");
  await withTenant(principal, async (tx) => {
    const rows = await tx.$queryRaw<{ storage_key: string | null; index_job_started_at: Date | null; index_heartbeat_at: Date | null }[]>`
      SELECT storage_key, index_job_started_at, index_heartbeat_at FROM documents WHERE id = ${documentId} FOR UPDATE`;
    if (rows.length === 0) throw notFound("Document");
    if (!rows[0].storage_key) throw conflict("No file has been uploaded for this document yet");
    const live = indexJobRunning(rows[0].index_job_started_at, rows[0].index_heartbeat_at);
    if (live && options.whileRunning !== "queue") throw conflict("This document is already being indexed; wait for that run to finish");
    await requestRecorded(tx, documentId, { id: requestId, model: options.model ?? null, runLive: live });
  });
  if (options.sendJob !== false) await sendIndexJob({ orgId: principal.orgId, documentId, requestId });
  return requestId;
}

// ---- running a job -----------------------------------------------------------

/**
 * Runs one job: indexes the document if the job's request is still pending, the document is not owned by
 * another run and the organization is under its limit. A failure is recorded on the row: retried later
 * with back-off (a new job with startAfter), or, when permanent (no text, unknown model, provider not
 * configured) or out of attempts, given up as `failed` with the reason. `inline`: the caller waits for the
 * result itself (POST …/index) and sends no job when it has to wait.
 */
async function runIndexJob(data: IndexJobData, options: { inline?: boolean } = {}): Promise<{ outcome: IndexJobOutcome; error?: unknown }> {
  const principal = jobPrincipal(data.orgId);
  const rows = await withTenant(principal, (tx) =>
    tx.$queryRaw<{ index_request_id: string | null; index_request_model: string | null; index_next_attempt_at: Date | null }[]>`
      SELECT index_request_id, index_request_model, index_next_attempt_at FROM documents WHERE id = ${data.documentId}`,
  );
  if (rows.length === 0 || rows[0].index_request_id !== data.requestId) return { outcome: "nothing" };
  // A retry is due later: its own job is queued for that time (this is a duplicate, or a busy re-send).
  const due = rows[0].index_next_attempt_at;
  if (due && due.getTime() > Date.now() && !options.inline) return { outcome: "nothing" };
  try {
    await indexDocument(principal, data.documentId, { model: rows[0].index_request_model, request: { id: data.requestId, perOrgLimit: indexJobPolicy.perOrgConcurrency } });
    return { outcome: "done" };
  } catch (error) {
    if (error instanceof RequestNotPending) return { outcome: "nothing" };
    if (error instanceof IndexBusy) {
      const at = new Date(Date.now() + indexJobPolicy.busyDelayMs);
      await withTenant(principal, (tx) => requestDeferred(tx, data.documentId, data.requestId, error.message, at));
      if (!options.inline) await sendIndexJob(data, at);
      return { outcome: "deferred" };
    }
    return { outcome: await recordFailure(principal, data, error), error };
  }
}

/** Failures a later attempt cannot fix: the file (no text), the request (unknown model, no file), the configuration. */
function permanent(error: unknown): boolean {
  if (error instanceof Invalid || error instanceof Conflict) return true;
  return error instanceof Unavailable && error.retryAfterSeconds === undefined;
}

const reasonOf = (error: unknown) => (error instanceof DomainError && typeof error.detail === "string" ? error.detail : "Indexing failed because of an internal error");

async function recordFailure(principal: Principal, data: IndexJobData, error: unknown): Promise<IndexJobOutcome> {
  // Deleted while indexing, or taken over by another run: nothing is left to do for this job.
  if (error instanceof NotFound || (error instanceof Conflict && /took over/.test(error.message))) return "nothing";
  const reason = reasonOf(error);
  const retryAt = await withTenant(principal, async (tx) => {
    const rows = await tx.$queryRaw<{ attempts: number }[]>`
      SELECT index_attempts AS attempts FROM documents WHERE id = ${data.documentId} AND index_request_id = ${data.requestId} FOR UPDATE`;
    if (rows.length === 0) return null;
    const attempts = Math.max(1, rows[0].attempts);
    if (permanent(error) || attempts >= indexJobPolicy.maxAttempts) {
      const final = permanent(error) ? reason : `${reason} (gave up after ${attempts} attempts)`;
      await requestFailed(tx, data.documentId, final);
      return "failed" as const;
    }
    const at = new Date(Date.now() + Math.min(indexJobPolicy.backoffMaxMs, indexJobPolicy.backoffBaseMs * 2 ** (attempts - 1)));
    await requestRetrying(tx, data.documentId, `Attempt ${attempts} of ${indexJobPolicy.maxAttempts} failed: ${reason}; trying again at ${at.toISOString()}`, at);
    return at;
  });
  if (retryAt === null) return "nothing";
  if (retryAt === "failed") {
    log.warn("index job failed", { documentId: data.documentId, reason });
    return "failed";
  }
  await sendIndexJob(data, retryAt);
  return "retrying";
}

/**
 * POST …/index: requests the indexing and waits for it while the client stays. The request runs here
 * unless a worker already runs it or the organization is at its limit; then this watches the record
 * until the request is done (a worker ran it), failed or retried. When the client goes away the job
 * goes on (it is queued), only the waiting stops.
 */
export async function indexAndWait(principal: Principal, documentId: string, options: { model?: string | null; signal?: AbortSignal } = {}) {
  // No job yet: the request runs right here, and it is on the row, so if this process dies the sweep queues it.
  // A job is sent when this run has to wait for a slot (a worker may take it first) or when a failure is retried.
  const requestId = await requestIndex(principal, documentId, { model: options.model ?? null, sendJob: false });
  const data = { orgId: principal.orgId, documentId, requestId };
  let sent = false;
  for (;;) {
    const { outcome, error } = await runIndexJob(data, { inline: true });
    if (outcome === "deferred" && !sent) {
      sent = true;
      await sendIndexJob(data);
    }
    if (outcome === "retrying" || outcome === "failed") throw error;
    const row = await withTenant(principal, (tx) => tx.document.findUnique({ where: { id: documentId } }));
    if (!row) throw notFound("Document");
    if (row.indexRequestId !== requestId) {
      if (outcome === "done" || row.indexJobState === "done" || row.indexJobState === "queued") return toDocumentRecord(row);
      if (row.indexJobState === "failed") throw new Invalid(`The document could not be indexed: ${row.indexJobReason ?? "unknown reason"}`);
      // Withdrawn (the index was removed) meanwhile.
      throw conflict("The index request was withdrawn while it waited");
    }
    if (row.indexJobState === "queued" && row.indexAttempts > 0 && row.indexNextAttemptAt) {
      // A worker's attempt failed and will be retried: say so now rather than hold the request for the back-off.
      const seconds = Math.max(1, Math.ceil((row.indexNextAttemptAt.getTime() - Date.now()) / 1000));
      throw new Unavailable(row.indexJobReason ?? "Indexing failed and will be tried again", seconds);
    }
    if (options.signal?.aborted) return toDocumentRecord(row);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

// ---- workers -----------------------------------------------------------------

/**
 * Re-sends the jobs of pending requests whose job should have run a while ago and that no live run owns:
 * a crash between a commit and its send, or a worker killed mid-run (its heartbeat lapsed). A request
 * is indexed at most once however many jobs it gets.
 */
export async function sweepIndexRequests(): Promise<number> {
  const { system } = await getDb();
  const organizations = await system.query<{ id: string }>("SELECT id FROM organizations ORDER BY id");
  let sent = 0;
  for (const { id: orgId } of organizations) {
    const stranded = await withTenant({ orgId }, (tx) =>
      tx.$queryRawUnsafe<{ id: string; index_request_id: string }[]>(
        `SELECT id, index_request_id FROM documents
         WHERE index_request_id IS NOT NULL AND NOT (${liveRunSql()})
           AND coalesce(index_next_attempt_at, index_requested_at) <= now() - make_interval(secs => $1)`,
        indexJobPolicy.strandedMs / 1000,
      ),
    );
    for (const doc of stranded) {
      await sendIndexJob({ orgId, documentId: doc.id, requestId: doc.index_request_id });
      sent += 1;
    }
  }
  if (sent > 0) log.info("stranded index requests queued again", { sent });
  return sent;
}

/**
 * Consumes `documents.index` (one job at a time per consumer: two consumers beside a server database,
 * one on the embedded engine, which is one connection) and schedules the sweep. Called where the
 * notification worker starts: the web process (in_process_worker) or `npm run worker`. Sweeps once at
 * start, so a restarted worker picks up what a killed one left.
 */
export async function startIndexWorker(): Promise<PgBoss> {
  // With maintenance (handing out again the jobs of dead workers, the sweep's schedule), unless already open.
  await getQueue(true);
  const boss = await indexQueue();
  const db = await getDb();
  const consumers = db.kind === "postgres" ? 2 : 1;
  for (let i = 0; i < consumers; i++) {
    await boss.work<IndexJobData>(INDEX_QUEUE, { batchSize: 1, pollingIntervalSeconds: 2 }, async (jobs) => {
      for (const job of jobs) await runIndexJob(job.data);
    });
  }
  await boss.work(INDEX_SWEEP_QUEUE, { pollingIntervalSeconds: 10 }, async () => void (await sweepIndexRequests()));
  await boss.schedule(INDEX_SWEEP_QUEUE, "* * * * *", {}, { tz: "UTC" });
  void sweepIndexRequests().catch((error: unknown) => log.warn("index sweep failed", { error: String(error) }));
  // The embedded engine runs no autovacuum: re-indexing and deletions leave dead chunk rows (housekeeping.ts).
  // One process holds an embedded data folder, so a timer in it is the whole schedule.
  startEmbeddedHousekeeping(db);
  log.info("index worker started", { queue: INDEX_QUEUE, consumers });
  return boss;
}

/** Runs every index job that is due now, until none is left (tests; `npm run worker -- --once`). */
export async function drainIndexQueue(): Promise<Record<IndexJobOutcome, number>> {
  const boss = await indexQueue();
  const counts: Record<IndexJobOutcome, number> = { done: 0, nothing: 0, deferred: 0, retrying: 0, failed: 0 };
  for (;;) {
    const jobs = await boss.fetch<IndexJobData>(INDEX_QUEUE, { batchSize: 5 });
    if (jobs.length === 0) return counts;
    for (const job of jobs) {
      try {
        counts[(await runIndexJob(job.data)).outcome] += 1;
        await boss.complete(INDEX_QUEUE, job.id);
      } catch (error) {
        await boss.fail(INDEX_QUEUE, job.id, { message: (error as Error).message });
      }
    }
  }
}

// ---- status --------------------------------------------------------------------

/** GET …/index: the document's index job as a person follows it (404 for another organization's id). */
export async function getIndexStatus(principal: Principal, documentId: string) {
  const row = await withTenant(principal, (tx) => tx.document.findUnique({ where: { id: documentId } }));
  if (!row) throw notFound("Document");
  const running = row.status === "indexing" && indexJobRunning(row.indexJobStartedAt, row.indexHeartbeatAt);
  const state = running
    ? "running"
    : row.indexJobState === "running" // its run died: the sweep queues it again
      ? "queued"
      : (row.indexJobState ?? (row.status === "indexed" ? "done" : row.status === "failed" ? "failed" : "none"));
  const base = `/api/v1/documents/${encodeURIComponent(documentId)}`;
  return {
    document_id: row.id,
    state,
    status: row.status,
    progress: { done: running ? row.indexProgressDone : state === "done" ? row.chunkCount : 0, total: running ? row.indexProgressTotal : state === "done" ? row.chunkCount : 0 },
    attempts: row.indexAttempts,
    max_attempts: indexJobPolicy.maxAttempts,
    reason: row.indexJobReason ?? (state === "failed" ? row.statusReason : null),
    requested_at: row.indexRequestedAt,
    next_attempt_at: row.indexNextAttemptAt,
    chunk_count: row.chunkCount,
    indexed_at: row.indexedAt,
    links: { document: base, status: `${base}/index` },
  };
}
