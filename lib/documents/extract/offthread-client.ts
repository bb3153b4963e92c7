import path from "node:path";
import { type ExtractionLimits, extractionLimits } from "@/lib/config/extraction";
import type { ExtractableExtension } from "./plain";
import type { ExtractionJob, ExtractionOutcome, ExtractionReply } from "./offthread";
import { DEFAULT_PDF_LIMITS, extractPdf } from "./pdf";
import { ExtractionError } from "./types";
import { WorkerPool } from "./worker-pool";

/**
 * The extraction workers of this process: two at a time (a file and its text are held whole,
 * and the machine has two cores). Resolved from the working directory, as pdf.ts does.
 */
export const extractionWorkers = new WorkerPool<ExtractionJob, ExtractionReply>({
  file: path.join(process.cwd(), "lib", "documents", "extract", "extract-worker.mjs"),
  start: "startExtractWorker",
  what: "the file",
  maxWorkers: 2,
  idleMs: 60_000,
  maxJobsPerWorker: 100,
});

/**
 * A stored file's text as chunks, read off the request thread: docx, txt and csv files in the
 * extraction worker; PDFs in the PDF workers, their text then chunked in the extraction worker.
 * Within `limits` (heap, wall clock per worker step, text size, docx XML size); past one it
 * throws ExtractionError with a reason for the documents page.
 */
export async function extractAndChunk(
  bytes: Uint8Array,
  extension: ExtractableExtension,
  opts: { signal?: AbortSignal; limits?: ExtractionLimits } = {},
): Promise<ExtractionOutcome> {
  const limits = opts.limits ?? extractionLimits();
  const jobLimits = { maxTextChars: limits.maxTextChars, maxDocxXmlBytes: limits.maxDocxXmlBytes };
  let job: ExtractionJob;
  let transfer: ArrayBuffer[] = [];
  if (extension === "pdf") {
    // The same heap and time limits for the PDF workers (their page limit is their own).
    const { segments, pageCount } = await extractPdf(bytes, opts.signal, { ...DEFAULT_PDF_LIMITS, timeoutMs: limits.timeoutMs, maxHeapMb: limits.maxHeapMb });
    job = { kind: "segments", segments, pageCount, extension, limits: jobLimits };
  } else {
    // A copy in its own ArrayBuffer is transferred, so the caller's buffer stays usable.
    const copy = new Uint8Array(bytes.byteLength);
    copy.set(bytes);
    job = { kind: "file", bytes: copy, extension, limits: jobLimits };
    transfer = [copy.buffer];
  }
  const reply = await extractionWorkers.run(job, transfer, opts.signal, { timeoutMs: limits.timeoutMs, maxHeapMb: limits.maxHeapMb });
  if (reply.ok) return reply.outcome;
  if ("reason" in reply) throw new ExtractionError(reply.reason);
  throw new Error(`the extraction worker failed: ${reply.crash}`);
}
