/** The delimiters a CSV file is recognised by when it does not say: comma, semicolon, tab, pipe. */
export const DELIMITER_CANDIDATES = [",", ";", "\t", "|"];

/** The text up to the first line break outside double quotes (all of it when there is none). */
export function firstLine(text: string): string {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') quoted = !quoted;
    else if (!quoted && (char === "\n" || char === "\r")) return text.slice(0, i);
  }
  return text;
}

/** How often `char` occurs outside double quotes in `line`. */
export function countOutsideQuotes(line: string, char: string): number {
  let quoted = false;
  let count = 0;
  for (const c of line) {
    if (c === '"') quoted = !quoted;
    else if (!quoted && c === char) count++;
  }
  return count;
}

/**
 * A CSV's delimiter, from its first line: the candidate that occurs most often outside quotes
 * (the first of them on a tie); comma when none does. Uploads (lib/data/formats) and document
 * extraction (lib/documents/extract) share this rule.
 */
export function detectDelimiter(text: string): string {
  const line = firstLine(text);
  let best = ",";
  let bestCount = 0;
  for (const candidate of DELIMITER_CANDIDATES) {
    const count = countOutsideQuotes(line, candidate);
    if (count > bestCount) [best, bestCount] = [candidate, count];
  }
  return best;
}
