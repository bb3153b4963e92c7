import { extractPdf } from "./pdf";
import { type ExtractableExtension, type PlainExtractionOptions, countExtractedWords, extractPlainText } from "./plain";
import { ExtractionError, type ExtractedDocument, type TextSegment } from "./types";

export { ExtractionError, type ExtractableExtension, type ExtractedDocument, type TextSegment };

/**
 * The text of a stored document, in reading order, with page numbers (pdf) or
 * row numbers (csv). Expected failures (scanned or corrupt PDF, zip bomb,
 * invalid CSV, no text at all, a limit) throw ExtractionError with a reason to
 * show; an aborted signal rejects with the signal's reason. PDFs are read in the
 * PDF workers, the rest on the calling thread: indexing runs all of it in the
 * extraction worker instead (`offthread-client.ts`).
 */
export async function extractText(bytes: Uint8Array, extension: ExtractableExtension, opts: PlainExtractionOptions = {}): Promise<ExtractedDocument> {
  if (extension !== "pdf") return extractPlainText(bytes, extension, opts);
  opts.signal?.throwIfAborted();
  const extracted = await extractPdf(bytes, opts.signal);
  opts.signal?.throwIfAborted();
  return countExtractedWords(extracted, extension, opts);
}
