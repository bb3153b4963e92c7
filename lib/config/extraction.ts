import { z } from "zod";
import { ConfigError } from "./schema";

/**
 * Limits of text extraction and chunking (docs/extraction.md). Every file is read in a
 * worker thread with its own heap limit and a wall-clock limit; past any limit the document
 * is marked failed with the reason, and the server and other indexing runs carry on.
 */
export interface ExtractionLimits {
  /** Wall clock of each worker step reading one file (PDF pages; extraction and chunking), queueing excluded. */
  timeoutMs: number;
  /** Heap of each worker thread reading a file (the PDF workers included). */
  maxHeapMb: number;
  /** Characters of extracted text accepted from one file. */
  maxTextChars: number;
  /** Uncompressed size of a Word document's main part, `word/document.xml`. */
  maxDocxXmlBytes: number;
}

export const DEFAULT_EXTRACTION_LIMITS: ExtractionLimits = {
  timeoutMs: 120_000,
  maxHeapMb: 512,
  maxTextChars: 50_000_000,
  maxDocxXmlBytes: 32 * 1024 * 1024,
};

const Env = z.object({
  DOCUMENT_EXTRACT_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(DEFAULT_EXTRACTION_LIMITS.timeoutMs),
  DOCUMENT_EXTRACT_MAX_HEAP_MB: z.coerce.number().int().min(64).max(16_384).default(DEFAULT_EXTRACTION_LIMITS.maxHeapMb),
  DOCUMENT_EXTRACT_MAX_TEXT_CHARS: z.coerce.number().int().min(1_000).max(1_000_000_000).default(DEFAULT_EXTRACTION_LIMITS.maxTextChars),
  DOCUMENT_DOCX_MAX_XML_BYTES: z.coerce.number().int().min(64 * 1024).max(4 * 1024 * 1024 * 1024).default(DEFAULT_EXTRACTION_LIMITS.maxDocxXmlBytes),
});

/** Parses the extraction variables; throws ConfigError naming the variable. */
export function loadExtractionLimits(env: Record<string, string | undefined>): ExtractionLimits {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = Env.safeParse(present);
  if (!parsed.success) throw new ConfigError(`Invalid configuration:\n  ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("\n  ")}`);
  const e = parsed.data;
  return { timeoutMs: e.DOCUMENT_EXTRACT_TIMEOUT_MS, maxHeapMb: e.DOCUMENT_EXTRACT_MAX_HEAP_MB, maxTextChars: e.DOCUMENT_EXTRACT_MAX_TEXT_CHARS, maxDocxXmlBytes: e.DOCUMENT_DOCX_MAX_XML_BYTES };
}

let cached: ExtractionLimits | undefined;

/** The extraction limits, read once per process (a change needs a restart, like all configuration). */
export function extractionLimits(): ExtractionLimits {
  cached ??= loadExtractionLimits(process.env);
  return cached;
}
