import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { withoutControlCharacters } from "./text-encoding";
import { ExtractionError, type TextSegment } from "./types";
import { WorkerPool } from "./worker-pool";

export interface PdfLimits {
  /** PDFs with more pages are refused (not partly indexed). */
  maxPages: number;
  /** Wall-clock budget for one PDF, queueing excluded. */
  timeoutMs: number;
  /** Heap of the worker thread; a PDF that needs more fails alone instead of the server. */
  maxHeapMb: number;
}

export const DEFAULT_PDF_LIMITS: PdfLimits = { maxPages: 2000, timeoutMs: 120_000, maxHeapMb: 512 };

type WorkerReply =
  | { ok: true; pageCount: number; pages: string[] }
  | { ok: false; kind: "password" | "invalid" | "too-many-pages" | "failed"; message: string; pageCount?: number };

/**
 * The process's PDF workers (pdf-worker.mjs, resolved from the working directory and loaded
 * unbundled: see the file's header); exported for tests and diagnostics. Each worker holds a whole
 * PDF and keeps a core busy: at most two at a time. An idle one keeps pdfjs loaded (about a second
 * to load on a busy machine) for a minute, and is replaced after 100 PDFs so that whatever pdfjs
 * caches cannot grow without end.
 */
export const pdfWorkers = new WorkerPool<{ bytes: Uint8Array; maxPages: number }, WorkerReply>({
  file: path.join(process.cwd(), "lib", "documents", "extract", "pdf-worker.mjs"),
  start: "startPdfWorker",
  what: "the PDF",
  maxWorkers: 2,
  idleMs: 60_000,
  maxJobsPerWorker: 100,
});

function runPdfWorker(bytes: Uint8Array, signal: AbortSignal | undefined, limits: PdfLimits): Promise<WorkerReply> {
  // A copy in its own ArrayBuffer is transferred, so the caller's buffer stays usable. (Buffer#slice
  // would be a view, and a small Buffer's ArrayBuffer is Node's shared pool.)
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return pdfWorkers.run({ bytes: copy, maxPages: limits.maxPages }, [copy.buffer], signal, limits);
}

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
  const reply = pdftotext ? await runPdftotext(pdftotext, bytes, signal, limits) : await runPdfWorker(bytes, signal, limits);
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
