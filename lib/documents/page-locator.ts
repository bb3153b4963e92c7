import { PAGE_BREAK } from "./chunk";

/** Words too common to tell passages apart. */
const STOP_WORDS = new Set("a an and are as at be by can do does for from how i in is it of on or the this to was what when where which who why will with you your".split(" "));

/** Lower-cased, accent-folded words of 3+ characters, cut to 5 characters: `expires` and `expiry` meet at `expir`. */
function stems(text: string): string[] {
  const words = text.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((w) => w.length >= 3 && !STOP_WORDS.has(w)).map((w) => w.slice(0, 5));
}

/**
 * The page of the passage inside a chunk that matches the query best (issue 28 §2), and the chunk's text
 * without its page marks. A chunk spanning pages marks each page's start with form feeds (chunk.ts,
 * PAGE_BREAK, one per page advanced); the page whose words hold most of the query's distinct words wins,
 * more occurrences break a tie, then the earlier page. Without marks (a chunk of one page, or indexed
 * before the marks existed) it is the chunk's first page; null when the chunk has no pages (txt, docx, csv).
 */
export function locatePassage(text: string, pageStart: number | null, query: string): { text: string; page: number | null } {
  if (!text.includes(PAGE_BREAK)) return { text, page: pageStart };
  const clean = text.replaceAll(PAGE_BREAK, "");
  if (pageStart === null) return { text: clean, page: null };
  const wanted = new Set(stems(query));
  let best = { page: pageStart, distinct: -1, total: -1 };
  let page = pageStart;
  // Each part starts after one or more form feeds (the pages it advances), the first at the chunk's first page.
  for (const match of text.matchAll(/(\f*)([^\f]*)/g)) {
    if (match[0] === "") continue;
    page += match[1].length;
    const found = stems(match[2]).filter((w) => wanted.has(w));
    const distinct = new Set(found).size;
    if (distinct > best.distinct || (distinct === best.distinct && found.length > best.total)) best = { page, distinct, total: found.length };
  }
  return { text: clean, page: best.page };
}
