import "server-only";
import crypto from "node:crypto";
import type { Principal } from "@/lib/access/roles";
import { documentStorageConfig } from "@/lib/config/storage";
import { getDb } from "@/lib/db/client";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import { getEmbedder, type Embedder } from "@/lib/embeddings";
import { DomainError, NotFound, Invalid, UpstreamFailed, TimedOut, notFound, conflict } from "@/lib/errors";
import { log } from "@/lib/log";
import { objectStorage } from "@/lib/storage/provider";
import type { DocumentChunk } from "../extract/chunk";
import { ExtractionError } from "../extract/types";
import { extractAndChunk } from "../extract/offthread-client";
import type { DocumentType } from "../file-types";
import { toDocumentRecord } from "../document-record";
import type { ChunkCopyRow } from "./chunk-copy";
import { StoreSchedule, type ScheduledBatch } from "./store-schedule";
import { runAbandoned, runClaimed, runHeartbeat, runProgress, runSwappedIn } from "./index-state";
import { JobLostError, storeChunks } from "./store-chunks";
import { tsvectorCalculator, type TsvectorCalculator } from "./tsvector-calculator";

/** Upper bound on one indexing run; the provider's own timeouts and retries fit well inside. */
export const INDEX_TIMEOUT_MS = 10 * 60_000;
/** A job older than this no longer blocks a new one (its process died without cleaning up). */
const JOB_LEASE_MS = INDEX_TIMEOUT_MS + 60_000;
/**
 * Chunks per embedding call, and at most per store step: one short transaction each, so other requests interleave
 * (PGlite is one connection). 128 since the tsvectors are computed off the write path: a batch takes the database
 * about as long as 64 did before, and the fixed cost of a batch (staging COPY, tenant entry, progress, commit: 7.5 ms
 * in PGlite, measured) is paid half as often. Steps that follow the tsvector calculator are often smaller (StoreSchedule).
 */
export const INDEX_BATCH_CHUNKS = 128;
/** Batches a PostgreSQL server stores at the same time, each on its own backend (see embedAndStore). */
const SERVER_STORES_AT_ONCE = 2;
/**
 * A running run renews its heartbeat this often; one whose heartbeat is older than `leaseMs` has died
 * (a killed process cannot say so) and no longer owns its document. Mutable for tests only.
 */
export const indexLease = { heartbeatMs: 10_000, leaseMs: 45_000 };
/**
 * Whether an indexing run that started at `startedAt` (heartbeat `heartbeatAt`) still owns its document:
 * within its time limit and its heartbeat fresh.
 */
export function indexJobRunning(startedAt: Date | null, heartbeatAt: Date | null = null): boolean {
  if (startedAt === null || Date.now() - startedAt.getTime() >= JOB_LEASE_MS) return false;
  return heartbeatAt === null || Date.now() - heartbeatAt.getTime() < indexLease.leaseMs;
}
/** The same test in SQL, on the documents row. */
export const liveRunSql = () =>
  `index_job_id IS NOT NULL AND index_job_started_at > now() - interval '${JOB_LEASE_MS} milliseconds'
   AND (index_heartbeat_at IS NULL OR index_heartbeat_at > now() - interval '${indexLease.leaseMs} milliseconds')`;

/**
 * Where an indexing run spent its wall time, phase by phase (filled in when passed: benchmarks).
 * What is left of the run's time went to claiming the job, the progress counter and the swap.
 */
export interface IndexTimings {
  readMs: number;
  /** Extraction and chunking: both run in the extraction worker, one round trip. */
  extractMs: number;
  /** Until the first batch could be stored: embedding it, and the progress counter's start. */
  firstEmbedMs: number;
  /** From the first batch's store to the last one's commit; the later batches are embedded meanwhile. */
  storeMs: number;
  /** Of storeMs, the time with a store transaction in flight (the rest: waiting for the calculator or the embedding). */
  storeBusyMs: number;
  words: number;
  chunks: number;
  /** Chunks whose tsvector came from the calculator (the rest: computed by the database as they were stored). */
  tsvSupplied: number;
}

export const emptyIndexTimings = (): IndexTimings => ({ readMs: 0, extractMs: 0, firstEmbedMs: 0, storeMs: 0, storeBusyMs: 0, words: 0, chunks: 0, tsvSupplied: 0 });

export interface IndexOptions {
  /** Embedding model; the active one when null or omitted. */
  model?: string | null;
  timings?: IndexTimings;
  /** Overrides INDEX_TIMEOUT_MS (tests). */
  timeoutMs?: number;
  /** Overrides the engine's tsvector calculator; null: the database computes every tsvector (benches' baseline, tests). */
  tsvectorCalculator?: TsvectorCalculator | null;
  /**
   * Run for this pending index request (index-jobs.ts): the claim refuses (RequestNotPending)
   * when the request is no longer pending, and waits (IndexBusy) while another run owns the document or the
   * organization already runs its limit of jobs; the claim counts an attempt.
   */
  request?: { id: string; perOrgLimit: number };
}

/** The request this run was started for is no longer pending: done by another run, or replaced. */
export class RequestNotPending extends Error {}
/** Another run owns the document, or the organization runs its limit of index jobs: try again later. */
export class IndexBusy extends Error {}

interface Job {
  id: string;
  documentId: string;
  storageKey: string;
  extension: DocumentType;
  generation: number;
  /** Whether a previous index exists (and stays searchable if this run fails). */
  hadIndex: boolean;
  previousStatus: string;
}

/** Renews the run's heartbeat until stopped (never throws: a missed beat only shortens the lease). */
function startHeartbeat(principal: Principal, job: Job): () => void {
  const beat = () =>
    void withTenant(principal, (tx) => runHeartbeat(tx, job.documentId, job.id)).catch(
      (error: unknown) => log.warn("indexing heartbeat failed", { documentId: job.documentId, error: String(error) }),
    );
  const timer = setInterval(beat, indexLease.heartbeatMs);
  timer.unref?.();
  return () => clearInterval(timer);
}

/**
 * Extracts, chunks, embeds and stores a document's text as a new index
 * generation, then swaps it in with one update of the document. Until the
 * swap, search keeps reading the previous generation; on any failure the new
 * chunks are deleted and the previous state restored, with the reason on the
 * record. Progress (chunks embedded / total) is written as batches complete.
 */
export async function indexDocument(principal: Principal, documentId: string, options: IndexOptions = {}) {
  const embedder = getEmbedder(options.model);

  const job = await claimJob(principal, documentId, options.request);
  const stopHeartbeat = startHeartbeat(principal, job);
  const timeoutMs = options.timeoutMs ?? INDEX_TIMEOUT_MS;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new TimedOut(`Indexing took longer than ${Math.round(timeoutMs / 1000)} s and was stopped`)), timeoutMs);
  const timings = options.timings;
  try {
    let started = performance.now();
    const bytes = await readObject(job.storageKey, controller.signal);
    if (timings) timings.readMs += performance.now() - started;

    // Extraction and chunking run in worker threads with heap and time limits (extract/offthread-client.ts).
    started = performance.now();
    const { chunks, wordCount } = await extractAndChunk(bytes, job.extension, { signal: controller.signal });
    if (timings) {
      timings.extractMs += performance.now() - started;
      timings.words += wordCount;
      timings.chunks += chunks.length;
    }

    const db = await getDb();
    const calculator = options.tsvectorCalculator === undefined ? tsvectorCalculator(db) : options.tsvectorCalculator;
    await embedAndStore(principal, job, embedder, chunks, calculator, db.kind === "postgres" ? SERVER_STORES_AT_ONCE : 1, controller.signal, timings);
    // A run past its time limit never swaps in, even when its last batch beat the timer.
    controller.signal.throwIfAborted();
    return await swapIn(principal, job, embedder, chunks.length);
  } catch (caught) {
    const error = controller.signal.aborted && !(caught instanceof DomainError) ? controller.signal.reason : caught;
    const failure = describeFailure(error);
    await abandonJob(principal, job, failure.reason).catch((cleanupError: unknown) =>
      log.error("indexing cleanup failed", { documentId, error: String(cleanupError) }),
    );
    throw failure.error;
  } finally {
    clearTimeout(timer);
    stopHeartbeat();
    // Stops provider calls or PDF parsing still running for a failed run (the next batch's embedding).
    if (!controller.signal.aborted) controller.abort(new Error("the indexing run has ended"));
  }
}

/** Marks the document as being indexed by a new job, or refuses: 404, 409 (running job, no file). */
async function claimJob(principal: Principal, documentId: string, request?: IndexOptions["request"]): Promise<Job> {
  return withTenant(principal, async (tx) => {
    if (request) {
      // Claims of one organization's jobs take turns, so two cannot both see a free slot.
      await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtext('quarry.index-jobs'), hashtext(${principal.orgId}))::text`;
    }
    const rows = await tx.$queryRaw<
      {
        status: string; storage_key: string | null; extension: string; index_generation: number; chunk_count: number; index_model: string | null;
        index_job_started_at: Date | null; index_heartbeat_at: Date | null; index_request_id: string | null;
      }[]
    >`SELECT status, storage_key, extension, index_generation, chunk_count, index_model, index_job_started_at, index_heartbeat_at, index_request_id
      FROM documents WHERE id = ${documentId} FOR UPDATE`;
    if (rows.length === 0) throw notFound("Document");
    const doc = rows[0];
    if (request && doc.index_request_id !== request.id) throw new RequestNotPending();
    if (indexJobRunning(doc.index_job_started_at, doc.index_heartbeat_at)) {
      if (request) throw new IndexBusy("another run is indexing this document");
      throw conflict("This document is already being indexed; wait for that run to finish");
    }
    if (!doc.storage_key) throw conflict("No file has been uploaded for this document yet");
    if (request) {
      // Row-level security shows this organization's documents only: the count is the organization's.
      const [{ n }] = await tx.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM documents WHERE id <> $1 AND ${liveRunSql()}`, documentId);
      if (n >= request.perOrgLimit) throw new IndexBusy(`waiting: ${n} other document${n === 1 ? " is" : "s are"} being indexed in this organization (at most ${request.perOrgLimit} at a time)`);
    }
    // Chunks of a newer generation can only be left over from a run whose process died.
    await tx.$executeRaw`DELETE FROM document_chunks WHERE document_id = ${documentId} AND generation > ${doc.index_generation}`;
    const id = crypto.randomUUID();
    await runClaimed(tx, documentId, id, request !== undefined);
    return {
      id,
      documentId,
      storageKey: doc.storage_key,
      extension: doc.extension as DocumentType,
      generation: doc.index_generation + 1,
      hadIndex: doc.index_model !== null && doc.chunk_count > 0,
      previousStatus: doc.status,
    };
  });
}

/** The stored file, read into memory (uploads are bounded by DOCUMENT_MAX_BYTES). */
async function readObject(key: string, signal: AbortSignal): Promise<Uint8Array> {
  const maxBytes = documentStorageConfig().maxBytes;
  const object = await objectStorage().get(key);
  const parts: Buffer[] = [];
  let size = 0;
  try {
    for await (const part of object.body) {
      signal.throwIfAborted();
      size += (part as Buffer).length;
      if (size > maxBytes) throw new ExtractionError(`The stored file is larger than the limit of ${maxBytes} bytes`);
      parts.push(part as Buffer);
    }
  } finally {
    object.body.destroy();
  }
  return new Uint8Array(Buffer.concat(parts, size));
}

/**
 * Stores the chunks in batches, each in its own transaction that also advances the progress
 * counter, as StoreSchedule chooses them: embedding runs ahead of the store (a remote provider's
 * latency, or the local embedder's slices, overlap the database work) and the tsvector calculator
 * beside it. Up to `storesAtOnce` batches are stored at the same time, each on its own connection:
 * a PostgreSQL server stores them on as many backends (cores); the embedded engine is one
 * connection, so 1 there. Every store has ended, committed or rolled back, before this returns or
 * throws, so a failed run's clean-up never races a store still in flight.
 */
async function embedAndStore(
  principal: Principal,
  job: Job,
  embedder: Embedder,
  chunks: DocumentChunk[],
  calculator: TsvectorCalculator | null,
  storesAtOnce: number,
  signal: AbortSignal,
  timings?: IndexTimings,
) {
  const started = performance.now();
  const schedule = new StoreSchedule(chunks, {
    batchChunks: INDEX_BATCH_CHUNKS,
    calculator,
    signal,
    embed: async (texts) => {
      const vectors = await embedder.embedDocuments(texts, { signal });
      if (vectors.length !== texts.length || vectors.some((v) => v.length !== embedder.dims)) {
        throw new UpstreamFailed(`embedding provider ${embedder.provider} returned ${vectors.length} vectors for ${texts.length} texts or a wrong dimension (expected ${embedder.dims})`);
      }
      return vectors;
    },
  });
  // While the first batch is being embedded.
  await updateProgress(principal, job, 0, chunks.length);

  const inFlight = new Set<Promise<void>>();
  const failures: unknown[] = [];
  let storeStarted = 0;
  let busySince = 0;
  try {
    for (;;) {
      while (inFlight.size >= storesAtOnce) await Promise.race(inFlight);
      if (failures.length > 0) throw failures[0];
      const batch = await schedule.next();
      if (failures.length > 0) throw failures[0];
      if (!batch) break;
      if (storeStarted === 0) {
        storeStarted = performance.now();
        if (timings) timings.firstEmbedMs += storeStarted - started;
      }
      if (inFlight.size === 0) busySince = performance.now();
      // Never rejects (a failure is kept for the loop to throw); settles once it has left inFlight.
      const store: Promise<void> = storeBatch(principal, job, embedder, batch)
        .then(
          () => {
            if (timings) timings.tsvSupplied += batch.tsv.filter((v) => v !== null).length;
          },
          (error: unknown) => void failures.push(error),
        )
        .then(() => {
          inFlight.delete(store);
          if (inFlight.size === 0 && timings) timings.storeBusyMs += performance.now() - busySince;
        });
      inFlight.add(store);
    }
  } finally {
    await Promise.all(inFlight);
  }
  if (failures.length > 0) throw failures[0];
  if (timings) timings.storeMs += performance.now() - storeStarted;
}

/** One scheduled batch as rows of document_chunks, stored by storeChunks (binary COPY, row-level security checked). */
async function storeBatch(principal: Principal, job: Job, embedder: Embedder, { chunks, vectors, tsv }: ScheduledBatch) {
  const rows: ChunkCopyRow[] = chunks.map((c, i) => ({
    orgId: principal.orgId, documentId: job.documentId, generation: job.generation, ordinal: c.ordinal, text: c.text,
    wordStart: c.wordStart, wordEnd: c.wordEnd, pageStart: c.pageStart, pageEnd: c.pageEnd, rowStart: c.rowStart, rowEnd: c.rowEnd,
    model: embedder.model, embedding: vectors[i], tsv: tsv[i],
  }));
  await storeChunks(principal, job, rows);
}

async function updateProgress(principal: Principal, job: Job, done: number, total: number) {
  await withTenant(principal, async (tx) => {
    const owned = await runProgress(tx, job.documentId, job.id, done, total);
    if (owned === 0) throw await jobLost(tx, job);
  });
}

/** One transaction: the document points at the new generation and older chunks go. */
async function swapIn(principal: Principal, job: Job, embedder: Embedder, chunkCount: number) {
  return withTenant(principal, async (tx) => {
    const rows = await tx.$queryRaw<{ index_job_id: string | null }[]>`SELECT index_job_id FROM documents WHERE id = ${job.documentId} FOR UPDATE`;
    if (rows.length === 0 || rows[0].index_job_id !== job.id) throw await jobLost(tx, job);
    await runSwappedIn(tx, job.documentId, { generation: job.generation, storageKey: job.storageKey, model: embedder.model, dims: embedder.dims, chunkCount });
    await tx.$executeRaw`DELETE FROM document_chunks WHERE document_id = ${job.documentId} AND generation <> ${job.generation}`;
    const row = await tx.document.findUniqueOrThrow({ where: { id: job.documentId } });
    return toDocumentRecord(row);
  });
}

/**
 * Deletes the failed run's chunks and gives the document back its previous
 * state: a previous index stays in use (status indexed, or uploaded when the
 * file was replaced since), otherwise the document is failed with the reason.
 */
async function abandonJob(principal: Principal, job: Job, reason: string) {
  const restored = job.hadIndex ? (job.previousStatus === "uploaded" ? "uploaded" : "indexed") : "failed";
  const statusReason = job.hadIndex ? `Re-indexing failed (${reason}); the previous index is still in use` : reason;
  await withTenant(principal, async (tx) => {
    await tx.$executeRaw`DELETE FROM document_chunks WHERE document_id = ${job.documentId} AND generation = ${job.generation}`;
    await runAbandoned(tx, job.documentId, { id: job.id, storageKey: job.storageKey, hadIndex: job.hadIndex, restored, statusReason });
  });
}

async function jobLost(tx: TenantTx, job: Job): Promise<JobLostError> {
  const exists = await tx.document.count({ where: { id: job.documentId } });
  return new JobLostError(exists === 0);
}

/** What the caller is told and what the record keeps, for every way indexing can fail. */
function describeFailure(error: unknown): { error: unknown; reason: string } {
  if (error instanceof ExtractionError) {
    return { error: new Invalid(`The document could not be indexed: ${error.reason}`), reason: error.reason };
  }
  if (error instanceof JobLostError) {
    const lost = error.deleted ? new NotFound("The document was deleted while it was being indexed") : conflict("Another request took over indexing this document");
    return { error: lost, reason: lost.message };
  }
  if (error instanceof DomainError) return { error, reason: typeof error.detail === "string" ? error.detail : error.message };
  return { error, reason: "Indexing failed because of an internal error" };
}
