/**
 * What the extraction worker (extract-worker.mjs) runs for one file: extraction of a docx, txt
 * or csv file, or the segments of a PDF read by the PDF workers, then the size cap, word count
 * and chunking. Plain data in and out (structured clone). Only relative imports and no
 * "server-only": the worker loads this file through tsx, outside the Next.js bundle.
 */
import { chunkDocument, type DocumentChunk } from "./chunk";
import { DEFAULT_DOCX_LIMITS } from "./docx";
import { type ExtractableExtension, countExtractedWords, extractPlainText } from "./plain";
import { ExtractionError, type TextSegment } from "./types";

export interface ExtractionJobLimits {
  maxTextChars: number;
  maxDocxXmlBytes: number;
}

export type ExtractionJob =
  | { kind: "file"; bytes: Uint8Array; extension: Exclude<ExtractableExtension, "pdf">; limits: ExtractionJobLimits }
  | { kind: "segments"; segments: TextSegment[]; pageCount?: number; extension: ExtractableExtension; limits: ExtractionJobLimits };

export interface ExtractionOutcome {
  chunks: DocumentChunk[];
  wordCount: number;
  pageCount?: number;
  rowCount?: number;
  encoding?: string;
}

export type ExtractionReply = { ok: true; outcome: ExtractionOutcome } | { ok: false; reason: string } | { ok: false; crash: string };

export async function runExtractionJob(job: ExtractionJob): Promise<ExtractionReply> {
  try {
    const extracted =
      job.kind === "file"
        ? await extractPlainText(job.bytes, job.extension, {
            docxLimits: { ...DEFAULT_DOCX_LIMITS, maxDocumentXmlBytes: job.limits.maxDocxXmlBytes },
            maxTextChars: job.limits.maxTextChars,
          })
        : await countExtractedWords({ segments: job.segments, pageCount: job.pageCount }, job.extension, { maxTextChars: job.limits.maxTextChars });
    const chunks = chunkDocument(extracted);
    if (chunks.length === 0) return { ok: false, reason: "The document contains no text" };
    const { wordCount, pageCount, rowCount, encoding } = extracted;
    return { ok: true, outcome: { chunks, wordCount, pageCount, rowCount, encoding } };
  } catch (error) {
    if (error instanceof ExtractionError) return { ok: false, reason: error.reason };
    return { ok: false, crash: error instanceof Error ? (error.stack ?? error.message) : String(error) };
  }
}
