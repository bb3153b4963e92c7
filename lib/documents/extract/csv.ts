import { CsvError, parse } from "csv-parse/sync";
import { decodeText } from "./text-encoding";
import { ExtractionError, type TextSegment } from "./types";

/**
 * A CSV file as one segment per data row, each rendered as `header: value`
 * lines so numbers keep their meaning ("region: North\namount: 1200").
 * Empty values are left out; values beyond the header are named `column N`;
 * the delimiter (comma, semicolon, tab, pipe) is detected.
 */
export function extractCsv(bytes: Uint8Array): { segments: TextSegment[]; rowCount: number; encoding: string } {
  const { text, encoding } = decodeText(bytes);
  let records: string[][];
  try {
    records = parse(text, {
      delimiter: detectDelimiter(text),
      relax_column_count: true,
      skip_empty_lines: true,
      // A stray quote inside an unquoted field (5" pipe) is data, not a syntax error.
      relax_quotes: true,
    });
  } catch (error) {
    if (error instanceof CsvError) throw new ExtractionError(`The CSV file is not valid: ${error.message}`, { cause: error });
    throw error;
  }
  const [header, ...rows] = records;
  if (!header || rows.length === 0) throw new ExtractionError("The CSV file has no data rows");
  const names = header.map((name, index) => name.trim() || `column ${index + 1}`);
  const segments: TextSegment[] = [];
  rows.forEach((values, index) => {
    const lines: string[] = [];
    values.forEach((value, column) => {
      const trimmed = value.trim();
      if (trimmed) lines.push(`${names[column] ?? `column ${column + 1}`}: ${trimmed}`);
    });
    if (lines.length > 0) segments.push({ text: lines.join("\n"), row: index + 1 });
  });
  return { segments, rowCount: rows.length, encoding };
}

const CANDIDATES = [",", ";", "\t", "|"];

/** The candidate that occurs most often, outside quotes, in the first line. Comma when none occurs. */
function detectDelimiter(text: string): string {
  const counts = new Map(CANDIDATES.map((candidate) => [candidate, 0]));
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') quoted = !quoted;
    else if (!quoted && (char === "\n" || char === "\r")) break;
    else if (!quoted && counts.has(char)) counts.set(char, counts.get(char)! + 1);
  }
  let best = ",";
  for (const [candidate, count] of counts) if (count > counts.get(best)!) best = candidate;
  return best;
}
