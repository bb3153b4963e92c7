/** A run of extracted text and where it came from. */
export interface TextSegment {
  text: string;
  /** 1-based page number (pdf). */
  page?: number;
  /** 1-based data row number, header excluded (csv). */
  row?: number;
  /** The heading of the section this text belongs to, which starts with that heading's paragraph (docx). */
  heading?: string;
}

/** The text of one document, in reading order, as the chunker consumes it. */
export interface ExtractedDocument {
  segments: TextSegment[];
  /** Words as `countWords` counts them; chunk word offsets use the same definition. */
  wordCount: number;
  pageCount?: number;
  rowCount?: number;
  /** The character encoding the bytes were decoded with (txt, csv). */
  encoding?: string;
}

/**
 * An expected, user-facing extraction failure (scanned PDF, corrupt file, zip
 * bomb, empty document). `reason` is safe to show and to store on the document.
 */
export class ExtractionError extends Error {
  readonly reason: string;
  constructor(reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.name = "ExtractionError";
    this.reason = reason;
  }
}
