import { extractCsv } from "./csv";
import { extractDocx } from "./docx";
import { extractPdf } from "./pdf";
import { extractTxt } from "./txt";
import { ExtractionError, type ExtractedDocument, type TextSegment } from "./types";
import { countWordsInTurns } from "./words";

export { ExtractionError, type ExtractedDocument, type TextSegment };

export type ExtractableExtension = "pdf" | "docx" | "txt" | "csv";

/**
 * The text of a stored document, in reading order, with page numbers (pdf) or
 * row numbers (csv). Expected failures (scanned or corrupt PDF, zip bomb,
 * invalid CSV, no text at all) throw ExtractionError with a reason to show;
 * an aborted signal rejects with the signal's reason.
 */
export async function extractText(bytes: Uint8Array, extension: ExtractableExtension, opts: { signal?: AbortSignal } = {}): Promise<ExtractedDocument> {
  const { signal } = opts;
  signal?.throwIfAborted();
  let extracted: Omit<ExtractedDocument, "wordCount">;
  switch (extension) {
    case "pdf":
      extracted = await extractPdf(bytes, signal);
      break;
    case "docx":
      extracted = await extractDocx(bytes);
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
  const wordCount = await countWordsInTurns(
    extracted.segments.map((segment) => segment.text),
    signal,
  );
  if (wordCount === 0) {
    if (extension === "pdf") {
      throw new ExtractionError("The PDF has no text layer (it is probably scanned images); OCR is not supported");
    }
    throw new ExtractionError("The document contains no text");
  }
  return { ...extracted, wordCount };
}
