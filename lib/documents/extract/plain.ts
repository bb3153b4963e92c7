/**
 * Extraction of the formats read without a PDF engine (docx, txt, csv), and the checks every
 * extracted text passes. Relative imports only and no "server-only": the extraction worker
 * loads this through tsx (offthread.ts), outside the Next.js bundle.
 */
import { extractCsv } from "./csv";
import { DEFAULT_DOCX_LIMITS, type DocxLimits, extractDocx } from "./docx";
import { extractTxt } from "./txt";
import { ExtractionError, type ExtractedDocument } from "./types";
import { countWordsInTurns } from "./words";

export type ExtractableExtension = "pdf" | "docx" | "txt" | "csv";

export interface PlainExtractionOptions {
  signal?: AbortSignal;
  docxLimits?: DocxLimits;
  /** Characters of text accepted from one file; unlimited when omitted. */
  maxTextChars?: number;
}

/** The text of a docx, txt or csv file, checked and counted (see `countExtractedWords`). */
export async function extractPlainText(bytes: Uint8Array, extension: Exclude<ExtractableExtension, "pdf">, opts: PlainExtractionOptions = {}): Promise<ExtractedDocument> {
  const { signal } = opts;
  signal?.throwIfAborted();
  let extracted: Omit<ExtractedDocument, "wordCount">;
  switch (extension) {
    case "docx":
      extracted = await extractDocx(bytes, opts.docxLimits ?? DEFAULT_DOCX_LIMITS);
      break;
    case "txt":
      extracted = extractTxt(bytes);
      break;
    case "csv":
      extracted = await extractCsv(bytes, signal);
      break;
    default:
      throw new ExtractionError(`Files of type .${String(extension)} cannot be indexed`);
  }
  signal?.throwIfAborted();
  return countExtractedWords(extracted, extension, opts);
}

/** Checks the text against the size cap, counts its words and refuses a document without any. */
export async function countExtractedWords(
  extracted: Omit<ExtractedDocument, "wordCount">,
  extension: ExtractableExtension,
  opts: { signal?: AbortSignal; maxTextChars?: number } = {},
): Promise<ExtractedDocument> {
  if (opts.maxTextChars !== undefined) {
    const chars = extracted.segments.reduce((sum, segment) => sum + segment.text.length, 0);
    if (chars > opts.maxTextChars) {
      throw new ExtractionError(`The document holds ${chars.toLocaleString("en-US")} characters of text; at most ${opts.maxTextChars.toLocaleString("en-US")} can be indexed`);
    }
  }
  const wordCount = await countWordsInTurns(
    extracted.segments.map((segment) => segment.text),
    opts.signal,
  );
  if (wordCount === 0) {
    if (extension === "pdf") {
      throw new ExtractionError("The PDF has no text layer (it is probably scanned images); OCR is not supported");
    }
    throw new ExtractionError("The document contains no text");
  }
  return { ...extracted, wordCount };
}
