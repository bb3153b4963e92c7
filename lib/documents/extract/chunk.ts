import type { ExtractedDocument } from "./types";
import { forEachWord } from "./words";

/** A window of consecutive words of a document, as embedded and searched. */
export interface DocumentChunk {
  /** 0-based position of the chunk in the document. */
  ordinal: number;
  text: string;
  /** Index of the chunk's first word in the document (words as `countWords` counts them). */
  wordStart: number;
  /** Index after the chunk's last word. */
  wordEnd: number;
  pageStart: number | null;
  pageEnd: number | null;
  rowStart: number | null;
  rowEnd: number | null;
}

/** SPEC §8: about 500 words with 50 words of overlap. */
export const DEFAULT_CHUNK_SIZE = 500;
export const DEFAULT_CHUNK_OVERLAP = 50;

/** Between the texts of two segments (pages, rows) inside one chunk. */
const SEGMENT_SEPARATOR = "\n\n";
/**
 * Where a chunk's words fall on pages: after the blank line between two pages' texts, one form feed per
 * page advanced (`…end of page 3\n\n\f\fstart of page 5`). Neither the embedders nor full-text search see
 * it (not a word character); search finds the page of the best-matching passage by it and strips it.
 */
export const PAGE_BREAK = "\f";
/**
 * Where a chunk's words fall on a CSV's rows, the same way: one vertical tab per data row advanced before each row
 * after the first (empty rows are counted, not stored). White space, like the form feed: no word, no token.
 */
export const ROW_BREAK = "\v";
/**
 * Where a chunk's words fall in a Word document's sections: a paragraph separator (U+2029) before each section
 * after the first (a section starts with its heading's paragraph), and a chunk whose first words are in a section
 * opens with that section's heading between two line separators (U+2028) and a blank line, so the heading of its
 * first part is known and its words are embedded and searched with the passage they head (words beyond the chunk's
 * word range, the one exception to "the text is the document's words"). Both are white space.
 */
export const SECTION_BREAK = "\u2029";
export const HEADING_MARK = "\u2028";

/**
 * Splits a document into windows of `size` words, each starting `size -
 * overlap` words after the previous one, so consecutive chunks share exactly
 * `overlap` words and the last chunk ends at the last word. Words are never
 * split. A chunk's text is the original text from its first to its last word
 * (line breaks kept), segments joined by a blank line, each page's or row's start
 * marked (PAGE_BREAK, ROW_BREAK); it carries the page or row range it covers (null for txt/docx).
 */
export function chunkDocument(doc: ExtractedDocument, opts: { size?: number; overlap?: number } = {}): DocumentChunk[] {
  const size = opts.size ?? DEFAULT_CHUNK_SIZE;
  const overlap = opts.overlap ?? DEFAULT_CHUNK_OVERLAP;
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`chunk size must be a positive integer, got ${size}`);
  if (!Number.isInteger(overlap) || overlap < 0 || overlap >= size) throw new RangeError(`chunk overlap must be an integer from 0 to size - 1, got ${overlap}`);

  const words = indexWords(doc);
  const chunks: DocumentChunk[] = [];
  for (let start = 0; start < words.count; start += size - overlap) {
    const end = Math.min(start + size, words.count);
    chunks.push(buildChunk(doc, words, chunks.length, start, end));
    if (end === words.count) break;
  }
  return chunks;
}

/** Every word's segment and character span, in typed arrays (a 10 MB text has about 2 M words). */
interface WordIndex {
  count: number;
  segment: Uint32Array;
  start: Uint32Array;
  end: Uint32Array;
}

function indexWords(doc: ExtractedDocument): WordIndex {
  let capacity = Math.max(16, doc.wordCount);
  let index: WordIndex = { count: 0, segment: new Uint32Array(capacity), start: new Uint32Array(capacity), end: new Uint32Array(capacity) };
  doc.segments.forEach((segment, segmentIndex) => {
    forEachWord(segment.text, (start, end) => {
      if (index.count === capacity) {
        // Only when `wordCount` understated the words: grow rather than trust it.
        capacity *= 2;
        index = { count: index.count, segment: grow(index.segment, capacity), start: grow(index.start, capacity), end: grow(index.end, capacity) };
      }
      index.segment[index.count] = segmentIndex;
      index.start[index.count] = start;
      index.end[index.count] = end;
      index.count++;
    });
  });
  return index;
}

function grow(array: Uint32Array, capacity: number): Uint32Array {
  const bigger = new Uint32Array(capacity);
  bigger.set(array);
  return bigger;
}

function buildChunk(doc: ExtractedDocument, words: WordIndex, ordinal: number, wordStart: number, wordEnd: number): DocumentChunk {
  let text = "";
  let previousPage: number | null = null;
  let pageStart: number | null = null;
  let pageEnd: number | null = null;
  let rowStart: number | null = null;
  let rowEnd: number | null = null;
  let first = wordStart;
  while (first < wordEnd) {
    const segmentIndex = words.segment[first];
    let last = first;
    while (last + 1 < wordEnd && words.segment[last + 1] === segmentIndex) last++;
    const segment = doc.segments[segmentIndex];
    // A form feed (vertical tab) inside a page's (row's) own text would read as a page (row) break.
    const part = withoutMarks(segment.text.slice(words.start[first], words.end[last]));
    if (first === wordStart && segment.heading !== undefined) text += `${HEADING_MARK}${withoutMarks(segment.heading)}${HEADING_MARK}${SEGMENT_SEPARATOR}`;
    if (first > wordStart) text += SEGMENT_SEPARATOR;
    if (first > wordStart && segment.heading !== undefined) text += SECTION_BREAK;
    if (segment.page !== undefined && previousPage !== null) text += PAGE_BREAK.repeat(Math.max(0, segment.page - previousPage));
    if (segment.row !== undefined && rowEnd !== null) text += ROW_BREAK.repeat(Math.max(0, segment.row - rowEnd));
    text += part;
    if (segment.page !== undefined) {
      previousPage = segment.page;
      pageStart ??= segment.page;
      pageEnd = segment.page;
    }
    if (segment.row !== undefined) {
      rowStart ??= segment.row;
      rowEnd = segment.row;
    }
    first = last + 1;
  }
  return { ordinal, text, wordStart, wordEnd, pageStart, pageEnd, rowStart, rowEnd };
}

/** A page's, row's or section's own text with the mark characters turned into spaces, so none reads as a mark. */
function withoutMarks(text: string): string {
  return text.replace(/[\f\v\u2028\u2029]/g, " ");
}
