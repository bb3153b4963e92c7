import "server-only";
import type { TenantTx } from "@/lib/db/tenant";
import { Prisma } from "@/lib/db/generated/client";

/*
 * A document's index state, written here only: one function per named transition of its row (status, the
 * running run's claim, heartbeat and progress, the index it points at, and the pending index request with its
 * attempts). Who decides when a transition happens (requests and jobs: index-jobs.ts; a run: index-document.ts and
 * store-chunks.ts; removal: remove-index.ts; an upload: files/upload.ts) calls the transition by its name.
 * docs/search.md "Index jobs" describes the states.
 */

// ---- the index request (index_request_id, index_job_state, attempts) -----------------------------------------------

/** A new pending request on the locked row: `running` when a live run owns the document (it answers it), else `queued`. */
export async function requestRecorded(tx: TenantTx, documentId: string, request: { id: string; model: string | null; runLive: boolean }) {
  await tx.$executeRaw`
    UPDATE documents SET index_request_id = ${request.id}, index_request_model = ${request.model}, index_requested_at = now(),
      index_attempts = 0, index_next_attempt_at = NULL, index_job_reason = NULL,
      index_job_state = ${request.runLive ? "running" : "queued"}
    WHERE id = ${documentId}`;
}

/** The request waits (its organization is at the limit, or a run owns the document) until `at`, saying why; only while still queued. */
export async function requestDeferred(tx: TenantTx, documentId: string, requestId: string, reason: string, at: Date) {
  await tx.$executeRaw`UPDATE documents SET index_job_reason = ${reason}, index_next_attempt_at = ${at}
    WHERE id = ${documentId} AND index_request_id = ${requestId} AND index_job_state = 'queued'`;
}

/** A failed attempt is tried again at `at`: queued again, with the reason saying so. */
export async function requestRetrying(tx: TenantTx, documentId: string, reason: string, at: Date) {
  await tx.$executeRaw`UPDATE documents SET index_job_state = 'queued', index_next_attempt_at = ${at}, index_job_reason = ${reason}
    WHERE id = ${documentId}`;
}

/** The request is given up (a permanent failure, or out of attempts): `failed`, the dead-letter state, with the reason. */
export async function requestFailed(tx: TenantTx, documentId: string, reason: string) {
  await tx.$executeRaw`UPDATE documents SET index_job_state = 'failed', index_job_reason = ${reason}, index_request_id = NULL, index_next_attempt_at = NULL
    WHERE id = ${documentId}`;
}

// ---- a run (index_job_id, heartbeat, progress) ------------------------------------------------------------------

/** A run claims the locked document: status `indexing`, progress reset; a run for a request also counts an attempt. */
export async function runClaimed(tx: TenantTx, documentId: string, runId: string, forRequest: boolean) {
  const attempt = forRequest ? Prisma.sql`, index_job_state = 'running', index_attempts = index_attempts + 1, index_next_attempt_at = NULL` : Prisma.empty;
  await tx.$executeRaw`
    UPDATE documents SET status = 'indexing', status_reason = NULL, index_progress_done = 0, index_progress_total = 0,
      index_job_id = ${runId}, index_job_started_at = now(), index_heartbeat_at = now(), updated_at = now()${attempt}
    WHERE id = ${documentId}`;
}

/** The run is alive (its lease renewed); nothing when it no longer owns the document. */
export async function runHeartbeat(tx: TenantTx, documentId: string, runId: string) {
  await tx.$executeRaw`UPDATE documents SET index_heartbeat_at = now() WHERE id = ${documentId} AND index_job_id = ${runId}`;
}

/** The run's progress; answers 0 when the run no longer owns the document. */
export function runProgress(tx: TenantTx, documentId: string, runId: string, done: number, total: number): Promise<number> {
  return tx.$executeRaw`UPDATE documents SET index_progress_done = ${done}, index_progress_total = ${total}, updated_at = now()
    WHERE id = ${documentId} AND index_job_id = ${runId}`;
}

/**
 * The run's progress advanced by `added` (an SQL expression: a count computed in the same statement), as text with
 * the document id as $1 and the run id as $2, for the bulk connection that stores chunks (store-chunks.ts). It
 * updates no row when the run no longer owns the document.
 */
export const runProgressAddedSql = (added: string) =>
  `UPDATE documents SET index_progress_done = index_progress_done + ${added}, updated_at = now() WHERE id = $1 AND index_job_id = $2`;

/**
 * The run's new generation becomes the document's index (on the locked row, the run's ownership checked): `indexed`,
 * stale when another file was uploaded meanwhile. A request made before the run read the file is answered by it
 * (`done`); a later one (a new upload) stays queued.
 */
export async function runSwappedIn(
  tx: TenantTx,
  documentId: string,
  run: { generation: number; storageKey: string; model: string; dims: number; chunkCount: number },
) {
  await tx.$executeRaw`
    UPDATE documents SET index_generation = ${run.generation}, index_model = ${run.model}, index_dims = ${run.dims},
      chunk_count = ${run.chunkCount}, status = 'indexed', status_reason = NULL, indexed_at = now(),
      index_stale = storage_key IS DISTINCT FROM ${run.storageKey},
      index_progress_done = ${run.chunkCount}, index_progress_total = ${run.chunkCount},
      index_job_id = NULL, index_job_started_at = NULL, index_heartbeat_at = NULL, updated_at = now(),
      index_job_state = CASE WHEN index_request_id IS NULL OR index_requested_at <= index_job_started_at THEN 'done' ELSE 'queued' END,
      index_job_reason = CASE WHEN index_request_id IS NULL OR index_requested_at <= index_job_started_at THEN NULL ELSE index_job_reason END,
      index_request_id = CASE WHEN index_requested_at <= index_job_started_at THEN NULL ELSE index_request_id END
    WHERE id = ${documentId}`;
}

/**
 * A failed run lets go of the document, which gets back its previous state: `restored` with `statusReason` (a previous
 * index stays in use, or the document is failed). A file uploaded during the run is a new file: simply `uploaded`
 * again, the failure concerned the old one. Nothing when the run no longer owns the document.
 */
export async function runAbandoned(
  tx: TenantTx,
  documentId: string,
  run: { id: string; storageKey: string; hadIndex: boolean; restored: string; statusReason: string },
) {
  await tx.$executeRaw`
    UPDATE documents SET
      status = CASE WHEN storage_key IS DISTINCT FROM ${run.storageKey} THEN 'uploaded' ELSE ${run.restored} END,
      status_reason = CASE WHEN storage_key IS DISTINCT FROM ${run.storageKey} THEN NULL ELSE ${run.statusReason} END,
      -- Without a previous index there is nothing to be stale (an upload during the run may have set it).
      index_stale = index_stale AND ${run.hadIndex},
      index_progress_done = 0, index_progress_total = 0, index_job_id = NULL, index_job_started_at = NULL, index_heartbeat_at = NULL, updated_at = now()
    WHERE id = ${documentId} AND index_job_id = ${run.id}`;
}

// ---- the document's file and index as a whole -------------------------------------------------------------------

/**
 * The index fields cleared: `uploaded` (or `created` without a file), no model, no chunks, no run's claim, and a
 * pending request withdrawn (its job then finds nothing to do). The generation counter keeps counting.
 */
export async function indexRemoved(tx: TenantTx, documentId: string) {
  await tx.$executeRaw`
    UPDATE documents SET status = CASE WHEN storage_key IS NULL THEN 'created' ELSE 'uploaded' END, status_reason = NULL,
      index_model = NULL, index_dims = NULL, chunk_count = 0, index_progress_done = 0, index_progress_total = 0,
      indexed_at = NULL, index_stale = false, index_job_id = NULL, index_job_started_at = NULL, updated_at = now(),
      index_job_state = NULL, index_request_id = NULL, index_job_reason = NULL, index_next_attempt_at = NULL, index_heartbeat_at = NULL
    WHERE id = ${documentId}`;
}

/**
 * The index state a new file leaves (written with the file's own columns, files/upload.ts): a running run keeps its
 * status and notices the new file when it swaps its index in; an index of the previous file becomes stale.
 */
export function fileReplaced(previous: { status: string; chunk_count: number; index_stale: boolean }, runLive: boolean) {
  const hadIndex = previous.chunk_count > 0 || previous.status === "indexing" || previous.status === "indexed";
  return { status: runLive ? "indexing" : "uploaded", statusReason: null, indexStale: hadIndex || previous.index_stale };
}
