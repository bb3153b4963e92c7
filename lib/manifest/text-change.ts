/**
 * The one stretch that differs between two texts, as an editor change: everything around it stays as it was, so an
 * edit computed on the whole text (a layout move, a builder save) is one small step of the editor's undo history.
 */
export function textChange(before: string, after: string): { from: number; to: number; insert: string } | null {
  if (before === after) return null;
  let from = 0;
  const shortest = Math.min(before.length, after.length);
  while (from < shortest && before.charCodeAt(from) === after.charCodeAt(from)) from += 1;
  let tail = 0;
  while (tail < shortest - from && before.charCodeAt(before.length - 1 - tail) === after.charCodeAt(after.length - 1 - tail)) tail += 1;
  return { from, to: before.length - tail, insert: after.slice(from, after.length - tail) };
}
