import { Fragment } from "react";

/** Words of a query worth marking: letters and digits, two characters or more, longest first so "oil" never splits "oiling". */
export function queryWords(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu) ?? [];
  return [...new Set(words.filter((w) => w.length >= 2))].sort((a, b) => b.length - a.length);
}

const escape = (word: string) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The text with every occurrence of the query's words wrapped in <mark>. */
export function Highlighted({ text, query }: { text: string; query: string }) {
  const words = queryWords(query);
  if (words.length === 0) return <>{text}</>;
  const pattern = new RegExp(`(${words.map(escape).join("|")})`, "giu");
  const parts = text.split(pattern);
  return (
    <>
      {parts.map((part, i) => (i % 2 === 1 ? <mark key={i}>{part}</mark> : <Fragment key={i}>{part}</Fragment>))}
    </>
  );
}
