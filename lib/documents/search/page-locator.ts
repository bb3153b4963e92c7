import { HEADING_MARK, PAGE_BREAK, ROW_BREAK, SECTION_BREAK } from "../extract/chunk";

/** Words too common to tell passages apart. */
const STOP_WORDS = new Set("a an and are as at be by can do does for from how i in is it of on or the this to was what when where which who why will with you your".split(" "));

/** Lower-cased, accent-folded words of 3+ characters, cut to 5 characters: `expires` and `expiry` meet at `expir`. */
function stems(text: string): string[] {
  const words = text.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((w) => w.length >= 3 && !STOP_WORDS.has(w)).map((w) => w.slice(0, 5));
}

/** Where the best-matching passage of a chunk is, and the chunk's text without its marks. */
export interface LocatedPassage {
  /** The chunk's text, page and row marks stripped. */
  text: string;
  /** pdf: the passage's page. */
  page: number | null;
  /** csv: the passage's data rows (1-based, header excluded). */
  rows: { start: number; end: number } | null;
  /** docx: the heading of the passage's section (null before the first heading, or without headings). */
  heading: string | null;
  /** The passage itself (a page's, rows' or section's part of the chunk; the whole chunk when it has no parts), to highlight. */
  passage: string;
}

/** A part of a chunk (a page, a row, a section) and how well it matches. */
interface Part {
  text: string;
  distinct: number;
  total: number;
}

/** Index of the part holding most of the wanted words' distinct stems, then most occurrences, then the earliest. */
function bestPart(parts: Part[]): number {
  let best = 0;
  parts.forEach((part, i) => {
    if (part.distinct > parts[best].distinct || (part.distinct === parts[best].distinct && part.total > parts[best].total)) best = i;
  });
  return best;
}

function scored(text: string, wanted: Set<string>): Part {
  const found = stems(text).filter((w) => wanted.has(w));
  return { text: text.trim(), distinct: new Set(found).size, total: found.length };
}

const SECTION_PREFIX = new RegExp(`^${HEADING_MARK}([^${HEADING_MARK}]*)${HEADING_MARK}\n\n`);

/** A Word document's chunk: its parts are sections, each headed by its first paragraph (the first by the prefix). */
function locateSection(text: string, query: string): LocatedPassage {
  const prefix = SECTION_PREFIX.exec(text);
  const body = prefix ? text.slice(prefix[0].length) : text;
  const wanted = new Set(stems(query));
  const texts = body.split(SECTION_BREAK);
  const parts = texts.map((part) => scored(part, wanted));
  const best = bestPart(parts);
  const heading = best === 0 ? (prefix ? prefix[1].trim() : null) : texts[best].split("\n\n")[0].trim();
  return { text: body.replaceAll(SECTION_BREAK, ""), page: null, rows: null, heading: heading || null, passage: parts[best].text };
}

/** Where the chunk starts (its first page or row); null for what it does not have. */
export interface ChunkStart {
  pageStart: number | null;
  rowStart: number | null;
  rowEnd: number | null;
}

/**
 * The passage inside a chunk that matches the query best (issue 28 §2), and the chunk's text without its marks.
 * A chunk spanning pages (rows) marks each page's (row's) start with form feeds (vertical tabs), one per page
 * (row) advanced (chunk.ts). The part whose words hold most of the query's distinct words wins, more occurrences
 * break a tie, then the earlier part; for a CSV, the neighbouring rows that score as well join it (a range).
 * Without marks (a chunk of one page or row, or indexed before the marks existed) it is the chunk's first page,
 * or its whole row range. A Word document's chunk is split into sections instead (SECTION_BREAK, HEADING_MARK),
 * and the best section's heading is answered.
 */
export function locatePassage(text: string, start: ChunkStart, query: string): LocatedPassage {
  if (text.startsWith(HEADING_MARK) || text.includes(SECTION_BREAK)) return locateSection(text, query);
  const mark = text.includes(PAGE_BREAK) ? PAGE_BREAK : text.includes(ROW_BREAK) ? ROW_BREAK : null;
  const clean = text.replaceAll(PAGE_BREAK, "").replaceAll(ROW_BREAK, "");
  const fallbackRows = start.rowStart !== null ? { start: start.rowStart, end: start.rowEnd ?? start.rowStart } : null;
  const first = mark === PAGE_BREAK ? start.pageStart : mark === ROW_BREAK ? start.rowStart : null;
  if (mark === null || first === null) return { text: clean, page: start.pageStart, rows: fallbackRows, heading: null, passage: clean.trim() };

  const wanted = new Set(stems(query));
  const parts: (Part & { at: number })[] = [];
  let at = first;
  // Each part starts after one or more marks (the pages or rows it advances), the first at the chunk's first one.
  for (const match of text.matchAll(mark === PAGE_BREAK ? /(\f*)([^\f]*)/g : /(\v*)([^\v]*)/g)) {
    if (match[0] === "") continue;
    at += match[1].length;
    parts.push({ at, ...scored(match[2], wanted) });
  }
  const best = bestPart(parts);
  if (mark === PAGE_BREAK) return { text: clean, page: parts[best].at, rows: null, heading: null, passage: parts[best].text };
  // Rows: the run of neighbouring rows that match as many distinct words (a fact spread over a few rows of a table).
  let from = best;
  let to = best;
  const ties = (i: number) => parts[best].distinct > 0 && parts[i].distinct === parts[best].distinct;
  while (from > 0 && ties(from - 1)) from--;
  while (to + 1 < parts.length && ties(to + 1)) to++;
  return {
    text: clean,
    page: start.pageStart,
    rows: { start: parts[from].at, end: parts[to].at },
    heading: null,
    passage: parts.slice(from, to + 1).map((p) => p.text).join("\n\n"),
  };
}
