import { Fragment } from "react";

// Words that carry no meaning of their own: marking every "the" hides the words that matched.
const STOP_WORDS = new Set(
  "a an and are as at be but by can do does for from has have how i if in into is it its me my no not of on or our so than that the their them then there these they this to was we were what when where which who why will with you your".split(" "),
);

/** Words of a query worth marking: letters and digits, two characters or more, no stop words, longest first. */
export function queryWords(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu) ?? [];
  return [...new Set(words.filter((w) => w.length >= 2 && !STOP_WORDS.has(w)))].sort((a, b) => b.length - a.length);
}

const escape = (word: string) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Whole words of the query, with a plural or verb ending ("chiller" marks "chillers", "deliver"
 * marks "delivered"), never the inside of another word ("the" does not mark "them"). One capture
 * group, so String.split puts the matches at odd indexes.
 */
export function highlightPattern(query: string): RegExp | null {
  const words = queryWords(query);
  if (words.length === 0) return null;
  return new RegExp(`((?<![\\p{L}\\p{N}])(?:${words.map(escape).join("|")})(?:s|es|ed|ing)?(?![\\p{L}\\p{N}]))`, "giu");
}

/** The text with every occurrence of the query's words wrapped in <mark>. */
export function Highlighted({ text, query }: { text: string; query: string }) {
  const pattern = highlightPattern(query);
  if (!pattern) return <>{text}</>;
  const parts = text.split(pattern);
  return (
    <>
      {parts.map((part, i) => (i % 2 === 1 ? <mark key={i}>{part}</mark> : <Fragment key={i}>{part}</Fragment>))}
    </>
  );
}
