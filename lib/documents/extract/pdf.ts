import { spawn } from "node:child_process";
import fs from "node:fs";
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

/**
 * Which extractor reads PDFs: poppler's `pdftotext` when it is installed (the fastest and the
 * reference for words and page breaks, docs/extraction.md), else pdfjs-dist in worker threads.
 */
export type PdfEngine = "auto" | "pdftotext" | "pdfjs";

/** Text of every page of a PDF, one segment per page (pages without text give no segment). */
export async function extractPdf(
  bytes: Uint8Array,
  signal: AbortSignal | undefined,
  limits: PdfLimits = DEFAULT_PDF_LIMITS,
  engine: PdfEngine = "auto",
): Promise<{ segments: TextSegment[]; pageCount: number }> {
  const pdftotext = engine === "pdfjs" ? null : findPdftotext();
  if (engine === "pdftotext" && !pdftotext) throw new Error("pdftotext is not installed");
  const reply = pdftotext ? await runPdftotext(pdftotext, bytes, signal, limits) : await pdfWorkers.run(bytes, signal, limits);
  if (!reply.ok) throw failure(reply, limits);
  const segments: TextSegment[] = [];
  reply.pages.forEach((raw, index) => {
    // Both extractors pass on what the content stream shows, control characters included (e.g. for a tab).
    const text = withoutControlCharacters(raw);
    if (/\S/.test(text)) segments.push({ text, page: index + 1 });
  });
  return { segments, pageCount: reply.pageCount };
}

/** Text larger than this from one PDF is refused (the stream is cut off there). */
export const MAX_PDF_TEXT_BYTES = 64 * 1024 * 1024;
const PDFTOTEXT_CANDIDATES = ["/usr/bin/pdftotext", "/usr/local/bin/pdftotext", "/opt/homebrew/bin/pdftotext"];
const PRLIMIT = "/usr/bin/prlimit";
let pdftotextPath: string | null | undefined;

/** The installed pdftotext, looked up once per process. */
export function findPdftotext(): string | null {
  pdftotextPath ??= PDFTOTEXT_CANDIDATES.find((candidate) => fs.existsSync(candidate)) ?? null;
  return pdftotextPath;
}

/**
 * pdftotext as a child process: the PDF on stdin, UTF-8 text on stdout with a form feed after
 * each page (which keeps page numbers). Bounded like the worker: killed past the time limit, at
 * the abort signal, or past MAX_PDF_TEXT_BYTES of text; its address space is capped with prlimit
 * (when present) at the worker's heap limit plus room for poppler's own code.
 */
function runPdftotext(binary: string, bytes: Uint8Array, signal: AbortSignal | undefined, limits: PdfLimits): Promise<WorkerReply> {
  signal?.throwIfAborted();
  const args = ["-enc", "UTF-8", "-eol", "unix", "-", "-"];
  const memoryBytes = (limits.maxHeapMb + 256) * 1024 * 1024;
  const [command, commandArgs] = fs.existsSync(PRLIMIT) ? [PRLIMIT, [`--as=${memoryBytes}`, "--", binary, ...args]] : [binary, args];
  return new Promise<WorkerReply>((resolve, reject) => {
    const child = spawn(command, commandArgs, { stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    let outBytes = 0;
    let stderr = "";
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      if (child.exitCode === null) child.kill("SIGKILL");
      outcome();
    };
    const onAbort = () => settle(() => reject(signal?.reason));
    const timer = setTimeout(
      () => settle(() => reject(new ExtractionError(`Reading the PDF took longer than ${Math.round(limits.timeoutMs / 1000)} s and was stopped`))),
      limits.timeoutMs,
    );
    signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout.on("data", (part: Buffer) => {
      outBytes += part.length;
      if (outBytes > MAX_PDF_TEXT_BYTES) settle(() => reject(new ExtractionError(`The PDF's text is larger than ${MAX_PDF_TEXT_BYTES / 1024 / 1024} MiB`)));
      else out.push(part);
    });
    child.stderr.on("data", (part: Buffer) => {
      if (stderr.length < 4096) stderr += part.toString("utf8");
    });
    child.on("error", (error) => settle(() => reject(error)));
    child.on("close", (code, killedBy) => {
      settle(() => {
        if (code !== 0) {
          const message = stderr.split("\n").filter(Boolean).slice(-1)[0] ?? `exit code ${code ?? killedBy}`;
          if (/password/i.test(stderr)) resolve({ ok: false, kind: "password", message });
          // Killed by the memory cap (poppler aborts on a failed allocation) or by a signal.
          else if (code === null || /bad_alloc|out of memory/i.test(stderr))
            reject(new ExtractionError(`Reading the PDF needed more than ${limits.maxHeapMb} MB of memory and was stopped`));
          else resolve({ ok: false, kind: "invalid", message });
          return;
        }
        const pages = Buffer.concat(out).toString("utf8").split("\f");
        // Every page ends with a form feed, so the last piece is what follows the last page: nothing.
        pages.pop();
        if (pages.length > limits.maxPages) resolve({ ok: false, kind: "too-many-pages", message: `${pages.length} pages`, pageCount: pages.length });
        else resolve({ ok: true, pageCount: pages.length, pages });
      });
    });
    // A PDF pdftotext refuses early closes stdin before it is all written: that is not an error here.
    child.stdin.on("error", () => undefined);
    child.stdin.end(bytes);
  });
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
