import path from "node:path";
import { Worker } from "node:worker_threads";
import { Semaphore } from "./semaphore";
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
 * Resolved from the working directory, not bundled: Next.js runs the server
 * from the project folder (`next start`), as do vitest, tsx and the bench.
 */
const WORKER_FILE = path.join(process.cwd(), "lib", "documents", "extract", "pdf-worker.mjs");

/** Each worker holds a whole PDF and keeps a core busy: at most two at a time per process. */
const workers = new Semaphore(2);

type WorkerReply =
  | { ok: true; pageCount: number; pages: string[] }
  | { ok: false; kind: "password" | "invalid" | "too-many-pages" | "failed"; message: string; pageCount?: number };

/** Text of every page of a PDF, one segment per page (pages without text give no segment). */
export async function extractPdf(
  bytes: Uint8Array,
  signal: AbortSignal | undefined,
  limits: PdfLimits = DEFAULT_PDF_LIMITS,
): Promise<{ segments: TextSegment[]; pageCount: number }> {
  const release = await workers.acquire(signal);
  try {
    const reply = await runWorker(bytes, signal, limits);
    if (!reply.ok) throw failure(reply, limits);
    const segments: TextSegment[] = [];
    reply.pages.forEach((text, index) => {
      if (/\S/.test(text)) segments.push({ text, page: index + 1 });
    });
    return { segments, pageCount: reply.pageCount };
  } finally {
    release();
  }
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

function runWorker(bytes: Uint8Array, signal: AbortSignal | undefined, limits: PdfLimits): Promise<WorkerReply> {
  signal?.throwIfAborted();
  // A copy in its own ArrayBuffer is transferred, so the caller's buffer stays usable. (Buffer#slice
  // would be a view, and a small Buffer's ArrayBuffer is Node's shared pool.)
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  const worker = new Worker(WORKER_FILE, {
    workerData: { bytes: copy, maxPages: limits.maxPages },
    transferList: [copy.buffer],
    resourceLimits: { maxOldGenerationSizeMb: limits.maxHeapMb },
  });
  return new Promise<WorkerReply>((resolve, reject) => {
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      void worker.terminate();
      outcome();
    };
    const onAbort = () => finish(() => reject(signal?.reason));
    const timer = setTimeout(
      () => finish(() => reject(new ExtractionError(`Reading the PDF took longer than ${Math.round(limits.timeoutMs / 1000)} s and was stopped`))),
      limits.timeoutMs,
    );
    signal?.addEventListener("abort", onAbort, { once: true });
    worker.once("message", (reply: WorkerReply) => finish(() => resolve(reply)));
    worker.once("error", (error: Error & { code?: string }) =>
      finish(() =>
        reject(
          error.code === "ERR_WORKER_OUT_OF_MEMORY"
            ? new ExtractionError(`Reading the PDF needed more than ${limits.maxHeapMb} MB of memory and was stopped`)
            : error,
        ),
      ),
    );
    worker.once("exit", (code) => finish(() => reject(new Error(`PDF worker exited with code ${code} before answering`))));
  });
}
