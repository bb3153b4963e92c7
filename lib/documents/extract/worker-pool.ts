import { pathToFileURL } from "node:url";
import type { Worker, WorkerOptions } from "node:worker_threads";
import { log } from "@/lib/log";
import { Semaphore } from "./semaphore";
import { ExtractionError } from "./types";

/** What one job may cost: wall clock (queueing excluded) and the heap of the worker running it. */
export interface WorkerJobLimits {
  timeoutMs: number;
  maxHeapMb: number;
}

export interface WorkerPoolOptions {
  /** Absolute path of a plain .mjs module, loaded natively (outside the Next.js bundle). */
  file: string;
  /** Its export that starts a worker running it: `(options: WorkerOptions) => Worker`. */
  start: string;
  /** What a job reads, for messages ("the Word document", "the file"). */
  what: string;
  maxWorkers: number;
  /** An idle worker stays loaded this long. */
  idleMs: number;
  /** A worker is replaced after this many jobs, so whatever it caches cannot grow without end. */
  maxJobsPerWorker: number;
}

interface PooledWorker {
  worker: Worker;
  heapMb: number;
  jobs: number;
  idleTimer?: NodeJS.Timeout;
}

/**
 * Worker threads reused between jobs, at most `maxWorkers` at a time (the rest wait). A worker
 * that timed out, was aborted, crashed or ran out of heap is terminated, never reused: its job
 * fails with an ExtractionError naming the limit, and the process carries on. Both the PDF
 * workers (pdf.ts) and the extraction workers (offthread-client.ts) are such pools.
 */
export class WorkerPool<Job, Reply> {
  private readonly slots: Semaphore;
  private readonly idle: PooledWorker[] = [];
  private spawnedCount = 0;
  private module: Promise<Record<string, (options: WorkerOptions) => Worker>> | undefined;

  constructor(private readonly options: WorkerPoolOptions) {
    this.slots = new Semaphore(options.maxWorkers);
  }

  /** Workers started so far and workers waiting for a job (for tests and diagnostics). */
  stats(): { spawned: number; idle: number } {
    return { spawned: this.spawnedCount, idle: this.idle.length };
  }

  async run(job: Job, transfer: ArrayBuffer[], signal: AbortSignal | undefined, limits: WorkerJobLimits): Promise<Reply> {
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
      const reply = await this.job(pooled, job, transfer, signal, limits);
      reusable = true;
      return reply;
    } finally {
      pooled.jobs++;
      if (reusable && pooled.jobs < this.options.maxJobsPerWorker) this.park(pooled);
      else void pooled.worker.terminate();
      release();
    }
  }

  private load() {
    this.module ??= (import(/* turbopackIgnore: true */ /* webpackIgnore: true */ pathToFileURL(this.options.file).href) as Promise<Record<string, (options: WorkerOptions) => Worker>>).catch(
      (error: unknown) => {
        // Not cached: the next job tries again.
        this.module = undefined;
        throw error;
      },
    );
    return this.module;
  }

  private async spawn(heapMb: number): Promise<PooledWorker> {
    const start = (await this.load())[this.options.start];
    this.spawnedCount++;
    const worker = start({ resourceLimits: { maxOldGenerationSizeMb: heapMb } });
    const pooled: PooledWorker = { worker, heapMb, jobs: 0 };
    worker.on("exit", () => this.forget(pooled));
    // During a job `job()` turns errors into its result; between jobs an unlistened error event would crash the process.
    worker.on("error", (error) => log.warn("worker thread failed", { file: this.options.file, error: String(error) }));
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
    pooled.idleTimer = setTimeout(() => void pooled.worker.terminate(), this.options.idleMs).unref();
    this.idle.push(pooled);
  }

  private forget(pooled: PooledWorker): void {
    clearTimeout(pooled.idleTimer);
    const index = this.idle.indexOf(pooled);
    if (index >= 0) this.idle.splice(index, 1);
  }

  private job({ worker }: PooledWorker, job: Job, transfer: ArrayBuffer[], signal: AbortSignal | undefined, limits: WorkerJobLimits): Promise<Reply> {
    signal?.throwIfAborted();
    const { what } = this.options;
    return new Promise<Reply>((resolve, reject) => {
      const onMessage = (reply: Reply) => settle(() => resolve(reply));
      const onError = (error: Error & { code?: string }) =>
        settle(() => reject(error.code === "ERR_WORKER_OUT_OF_MEMORY" ? new ExtractionError(`Reading ${what} needed more than ${limits.maxHeapMb} MB of memory and was stopped`) : error));
      const onExit = (code: number) => settle(() => reject(new Error(`worker thread (${what}) exited with code ${code} before answering`)));
      const onAbort = () => settle(() => reject(signal?.reason));
      const timer = setTimeout(
        () => settle(() => reject(new ExtractionError(`Reading ${what} took longer than ${Math.round(limits.timeoutMs / 1000)} s and was stopped`))),
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
      worker.postMessage(job, transfer);
    });
  }
}
