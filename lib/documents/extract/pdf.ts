import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Worker, WorkerOptions } from "node:worker_threads";
import { log } from "@/lib/log";
import { Semaphore } from "./semaphore";
import { withoutControlCharacters } from "./text-encoding";
import { ExtractionError, type TextSegment } from "./types";

export interface PdfLimits {
  /** PDFs with more pages are refused (not partly indexed). */
  maxPages: number;
  /** Wall-clock budget for one PDF, queueing excluded. */
  timeoutMs: number;
  /** Heap of the worker thread; a PDF that needs more fails alone instead of the server. */
  maxHeapMb: number;
}

export const DEFAULT_PDF_LIMITS: PdfLimits = { maxPages: 2000, timeoutMs: 120_000, maxHeapMb: 512 };

/**
 * Resolved from the working directory and loaded unbundled (see the file's
 * header): Next.js runs the server from the project folder (`next start`), as
 * do vitest, tsx and the bench.
 */
const WORKER_FILE = path.join(process.cwd(), "lib", "documents", "extract", "pdf-worker.mjs");

type WorkerModule = { startPdfWorker(options: WorkerOptions): Worker };
let workerModule: Promise<WorkerModule> | undefined;

function loadWorkerModule(): Promise<WorkerModule> {
  workerModule ??= (import(/* turbopackIgnore: true */ /* webpackIgnore: true */ pathToFileURL(WORKER_FILE).href) as Promise<WorkerModule>).catch((error: unknown) => {
    // Not cached: the next PDF tries again.
    workerModule = undefined;
    throw error;
  });
  return workerModule;
}

/** Each worker holds a whole PDF and keeps a core busy: at most two at a time per process. */
const MAX_WORKERS = 2;
/** An idle worker keeps pdfjs loaded (about a second to load on a busy machine) this long. */
const IDLE_MS = 60_000;
/** A worker is replaced after this many PDFs, so whatever pdfjs keeps cached cannot grow without end. */
const MAX_JOBS_PER_WORKER = 100;

type WorkerReply =
  | { ok: true; pageCount: number; pages: string[] }
  | { ok: false; kind: "password" | "invalid" | "too-many-pages" | "failed"; message: string; pageCount?: number };

interface PooledWorker {
  worker: Worker;
  heapMb: number;
  jobs: number;
  idleTimer?: NodeJS.Timeout;
}

/**
 * Worker threads running pdf-worker.mjs, reused between PDFs. A worker that
 * timed out, was aborted, crashed or ran out of heap is terminated, never reused.
 */
class PdfWorkerPool {
  private readonly slots = new Semaphore(MAX_WORKERS);
  private readonly idle: PooledWorker[] = [];
  private spawnedCount = 0;

  /** Workers started so far and workers waiting for a job (for tests and diagnostics). */
  stats(): { spawned: number; idle: number } {
    return { spawned: this.spawnedCount, idle: this.idle.length };
  }

  async run(bytes: Uint8Array, signal: AbortSignal | undefined, limits: PdfLimits): Promise<WorkerReply> {
    const release = await this.slots.acquire(signal);
    let pooled: PooledWorker;
    try {
      pooled = this.takeIdle(limits.maxHeapMb) ?? (await this.spawn(limits.maxHeapMb));
    } catch (error) {
      release();
      throw error;
    }
    let reusable = false;
    try {
      const reply = await this.job(pooled, bytes, signal, limits);
      reusable = true;
      return reply;
    } finally {
      pooled.jobs++;
      if (reusable && pooled.jobs < MAX_JOBS_PER_WORKER) this.park(pooled);
      else void pooled.worker.terminate();
      release();
    }
  }

  private async spawn(heapMb: number): Promise<PooledWorker> {
    const { startPdfWorker } = await loadWorkerModule();
    this.spawnedCount++;
    const worker = startPdfWorker({ resourceLimits: { maxOldGenerationSizeMb: heapMb } });
    const pooled: PooledWorker = { worker, heapMb, jobs: 0 };
    worker.on("exit", () => this.forget(pooled));
    // During a job `job()` turns errors into its result; between jobs an unlistened error event would crash the process.
    worker.on("error", (error) => log.warn("PDF worker failed", { error: String(error) }));
    return pooled;
  }

  private takeIdle(heapMb: number): PooledWorker | undefined {
    const index = this.idle.findIndex((pooled) => pooled.heapMb === heapMb);
    if (index < 0) return undefined;
    const [pooled] = this.idle.splice(index, 1);
    clearTimeout(pooled.idleTimer);
    pooled.worker.ref();
    return pooled;
  }

  private park(pooled: PooledWorker): void {
    // An idle worker must not keep the process (a script, the test runner) alive.
    pooled.worker.unref();
    pooled.idleTimer = setTimeout(() => void pooled.worker.terminate(), IDLE_MS).unref();
    this.idle.push(pooled);
  }

  private forget(pooled: PooledWorker): void {
    clearTimeout(pooled.idleTimer);
    const index = this.idle.indexOf(pooled);
    if (index >= 0) this.idle.splice(index, 1);
  }

  private job({ worker }: PooledWorker, bytes: Uint8Array, signal: AbortSignal | undefined, limits: PdfLimits): Promise<WorkerReply> {
    signal?.throwIfAborted();
    return new Promise<WorkerReply>((resolve, reject) => {
      const onMessage = (reply: WorkerReply) => settle(() => resolve(reply));
      const onError = (error: Error & { code?: string }) =>
        settle(() =>
          reject(
            error.code === "ERR_WORKER_OUT_OF_MEMORY"
              ? new ExtractionError(`Reading the PDF needed more than ${limits.maxHeapMb} MB of memory and was stopped`)
              : error,
          ),
        );
      const onExit = (code: number) => settle(() => reject(new Error(`PDF worker exited with code ${code} before answering`)));
      const onAbort = () => settle(() => reject(signal?.reason));
      const timer = setTimeout(
        () => settle(() => reject(new ExtractionError(`Reading the PDF took longer than ${Math.round(limits.timeoutMs / 1000)} s and was stopped`))),
        limits.timeoutMs,
      );
      let settled = false;
      function settle(outcome: () => void) {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        worker.off("message", onMessage).off("error", onError).off("exit", onExit);
        outcome();
      }
      worker.on("message", onMessage).on("error", onError).on("exit", onExit);
      signal?.addEventListener("abort", onAbort, { once: true });
      // A copy in its own ArrayBuffer is transferred, so the caller's buffer stays usable. (Buffer#slice
      // would be a view, and a small Buffer's ArrayBuffer is Node's shared pool.)
      const copy = new Uint8Array(bytes.byteLength);
      copy.set(bytes);
      worker.postMessage({ bytes: copy, maxPages: limits.maxPages }, [copy.buffer]);
    });
  }
}

/** The process's PDF workers; exported for tests and diagnostics. */
export const pdfWorkers = new PdfWorkerPool();

/** Text of every page of a PDF, one segment per page (pages without text give no segment). */
export async function extractPdf(
  bytes: Uint8Array,
  signal: AbortSignal | undefined,
  limits: PdfLimits = DEFAULT_PDF_LIMITS,
): Promise<{ segments: TextSegment[]; pageCount: number }> {
  const reply = await pdfWorkers.run(bytes, signal, limits);
  if (!reply.ok) throw failure(reply, limits);
  const segments: TextSegment[] = [];
  reply.pages.forEach((raw, index) => {
    // pdfjs passes on what the content stream shows, control characters included (e.g. for a tab).
    const text = withoutControlCharacters(raw);
    if (/\S/.test(text)) segments.push({ text, page: index + 1 });
  });
  return { segments, pageCount: reply.pageCount };
}

function failure(reply: Extract<WorkerReply, { ok: false }>, limits: PdfLimits): ExtractionError {
  switch (reply.kind) {
    case "password":
      return new ExtractionError("The PDF is encrypted with a password; upload an unprotected copy");
    case "invalid":
      return new ExtractionError(`The PDF is corrupt or not a PDF (${reply.message})`);
    case "too-many-pages":
      return new ExtractionError(`The PDF has ${reply.pageCount} pages; at most ${limits.maxPages} can be indexed`);
    case "failed":
      return new ExtractionError(`The PDF could not be read (${reply.message})`);
  }
}
