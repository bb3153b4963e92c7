import { inflateRawSync } from "node:zlib";
import mammoth from "mammoth";
import { readZipDirectory, type ZipEntry } from "../zip-directory";
import { withoutControlCharacters } from "./text-encoding";
import { ExtractionError, type TextSegment } from "./types";

export interface DocxLimits {
  /** Sum of the entries' uncompressed sizes. */
  maxUncompressedBytes: number;
  /** Largest uncompressed/compressed ratio for an entry over 1 MiB (text XML deflates about 10:1). */
  maxRatio: number;
  maxEntries: number;
  /**
   * Uncompressed size of `word/document.xml`. mammoth holds the whole XML tree in memory, many
   * times the file's size: 240 MiB of tiny paragraphs (ratio under 10, so the bomb checks pass)
   * took the heap past its limit.
   */
  maxDocumentXmlBytes: number;
}

export const DEFAULT_DOCX_LIMITS: DocxLimits = { maxUncompressedBytes: 256 * 1024 * 1024, maxRatio: 200, maxEntries: 10_000, maxDocumentXmlBytes: 32 * 1024 * 1024 };

const RATIO_CHECK_FROM = 1024 * 1024;
const LOCAL_HEADER = 0x04034b50;
const STORED = 0;
const DEFLATE = 8;

/**
 * The raw text of a Word document (paragraphs separated by blank lines), after the archive passed `checkArchive`,
 * as one segment per section: a paragraph styled as a heading (Heading 1-6) starts a section that carries it
 * (issue 28 §2: citations name the heading of the passage). The text before the first heading, or of a document
 * without headings, is one segment without one.
 */
export async function extractDocx(bytes: Uint8Array, limits: DocxLimits = DEFAULT_DOCX_LIMITS): Promise<{ segments: TextSegment[] }> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  checkArchive(buffer, limits);
  let text: string;
  let headings: string[];
  try {
    text = withoutControlCharacters((await mammoth.extractRawText({ buffer })).value);
    // The raw text has no styles; mammoth's HTML marks headings (h1-h6). Read twice: about 1 M words/s each.
    headings = headingsOf((await mammoth.convertToHtml({ buffer })).value);
  } catch (error) {
    throw new ExtractionError(`The Word document could not be read (${error instanceof Error ? error.message : String(error)})`, { cause: error });
  }
  return { segments: sections(text, headings) };
}

/** The text of each h1-h6 of mammoth's HTML, in order, tags dropped and its escapes undone. */
function headingsOf(html: string): string[] {
  const entities: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" };
  return Array.from(html.matchAll(/<h[1-6][^>]*>([\s\S]*?)<\/h[1-6]>/g), (m) =>
    withoutControlCharacters(m[1].replace(/<[^>]*>/g, "").replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => entities[name])).trim(),
  ).filter((heading) => heading !== "");
}

/**
 * Splits the raw text at the paragraphs that are the headings, matched in order (the HTML and the raw text list the
 * same paragraphs in the same order; a heading not found as a paragraph of its own is skipped). Joined again with a
 * blank line, the sections are the raw text.
 */
function sections(text: string, headings: string[]): TextSegment[] {
  if (headings.length === 0) return [{ text }];
  const paragraphs = text.split("\n\n");
  const segments: TextSegment[] = [];
  let current: { paragraphs: string[]; heading?: string } = { paragraphs: [] };
  let next = 0;
  for (const paragraph of paragraphs) {
    if (next < headings.length && paragraph.trim() === headings[next]) {
      if (current.paragraphs.length > 0) segments.push(segmentOf(current));
      current = { paragraphs: [], heading: headings[next] };
      next++;
    }
    current.paragraphs.push(paragraph);
  }
  segments.push(segmentOf(current));
  return segments;
}

const segmentOf = (section: { paragraphs: string[]; heading?: string }): TextSegment =>
  section.heading === undefined ? { text: section.paragraphs.join("\n\n") } : { text: section.paragraphs.join("\n\n"), heading: section.heading };

/**
 * Refuses zip bombs before mammoth inflates anything: the directory's declared
 * sizes must stay within the limits, and every entry is then inflated with
 * its declared size as a hard output cap, so an entry that lies about its
 * size fails after at most that many bytes instead of filling memory.
 */
function checkArchive(buffer: Buffer, limits: DocxLimits): void {
  const directory = readZipDirectory(buffer, buffer.length);
  if (!directory.ok) throw new ExtractionError(`The file is not a valid Word document: ${directory.reason}`);
  const { entries } = directory;
  const main = entries.find((entry) => entry.name === "word/document.xml");
  if (!main) throw new ExtractionError("The file is not a Word document: it has no word/document.xml");
  if (main.uncompressedSize > limits.maxDocumentXmlBytes) {
    throw new ExtractionError(`The Word document's text part (word/document.xml) expands to ${formatSize(main.uncompressedSize)}; at most ${formatSize(limits.maxDocumentXmlBytes)} are accepted`);
  }
  if (entries.length > limits.maxEntries) throw new ExtractionError(`The Word document has ${entries.length} parts; at most ${limits.maxEntries} are accepted`);
  let declared = 0;
  for (const entry of entries) {
    declared += entry.uncompressedSize;
    const ratio = entry.uncompressedSize / Math.max(1, entry.compressedSize);
    if (entry.uncompressedSize > RATIO_CHECK_FROM && ratio > limits.maxRatio) {
      throw new ExtractionError(`The Word document looks like a zip bomb: ${entry.name} expands ${Math.round(ratio)} times (at most ${limits.maxRatio} accepted)`);
    }
  }
  if (declared > limits.maxUncompressedBytes) {
    throw new ExtractionError(`The Word document expands to ${formatSize(declared)}; at most ${formatSize(limits.maxUncompressedBytes)} are accepted`);
  }
  for (const entry of entries) checkEntrySize(buffer, entry);
}

function checkEntrySize(buffer: Buffer, entry: ZipEntry): void {
  const header = entry.localHeaderOffset;
  if (header + 30 > buffer.length || buffer.readUInt32LE(header) !== LOCAL_HEADER) throw new ExtractionError(`The Word document is corrupt: ${entry.name} has no local header`);
  const dataStart = header + 30 + buffer.readUInt16LE(header + 26) + buffer.readUInt16LE(header + 28);
  const data = buffer.subarray(dataStart, dataStart + entry.compressedSize);
  if (data.length !== entry.compressedSize) throw new ExtractionError(`The Word document is corrupt: ${entry.name} is truncated`);
  if (entry.method === STORED) {
    if (entry.compressedSize !== entry.uncompressedSize) throw new ExtractionError(`The Word document is corrupt: ${entry.name} has inconsistent sizes`);
    return;
  }
  if (entry.method !== DEFLATE) throw new ExtractionError(`The Word document uses an unsupported compression method (${entry.method}) for ${entry.name}`);
  let inflated: Buffer;
  try {
    // One byte over the declared size is enough to prove the declaration wrong.
    inflated = inflateRawSync(data, { maxOutputLength: entry.uncompressedSize + 1 });
  } catch (error) {
    if (error instanceof RangeError) throw new ExtractionError(`The Word document looks like a zip bomb: ${entry.name} expands past its declared size`);
    throw new ExtractionError(`The Word document is corrupt: ${entry.name} does not inflate`, { cause: error });
  }
  if (inflated.length !== entry.uncompressedSize) throw new ExtractionError(`The Word document is corrupt: ${entry.name} does not match its declared size`);
}

function formatSize(bytes: number): string {
  return bytes < 1024 * 1024 ? `${Math.ceil(bytes / 1024)} KiB` : `${Math.round(bytes / 1024 / 1024)} MiB`;
}
