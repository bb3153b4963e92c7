import { Readable } from "node:stream";
import { setImmediate as nextTurn } from "node:timers/promises";
import { CsvError, parse } from "csv-parse";
import { detectDelimiter } from "@/lib/csv-delimiter";
import { decodeText } from "./text-encoding";
import { ExtractionError, type TextSegment } from "./types";

/** Characters parsed per turn of the event loop: a 50 MB CSV then never holds the loop for long. */
const SLICE_CHARS = 256 * 1024;

/**
 * A CSV file as one segment per data row, each rendered as `header: value`
 * lines so numbers keep their meaning ("region: North\namount: 1200").
 * Empty values are left out; values beyond the header are named `column N`;
 * the delimiter (comma, semicolon, tab, pipe) is detected. Parsed in slices,
 * yielding to the event loop between them.
 */
export async function extractCsv(bytes: Uint8Array, signal?: AbortSignal): Promise<{ segments: TextSegment[]; rowCount: number; encoding: string }> {
  const { text, encoding } = decodeText(bytes);
  const parser = parse({
    delimiter: detectDelimiter(text),
    relax_column_count: true,
    skip_empty_lines: true,
    // A stray quote inside an unquoted field (5" pipe) is data, not a syntax error.
    relax_quotes: true,
  });
  const source = Readable.from(slices(text, signal));
  source.on("error", (error) => parser.destroy(error));
  source.pipe(parser);

  let names: string[] | undefined;
  let rowCount = 0;
  const segments: TextSegment[] = [];
  try {
    for await (const values of parser as AsyncIterable<string[]>) {
      if (!names) {
        names = values.map((name, index) => name.trim() || `column ${index + 1}`);
        continue;
      }
      rowCount++;
      const lines: string[] = [];
      values.forEach((value, column) => {
        const trimmed = value.trim();
        if (trimmed) lines.push(`${names![column] ?? `column ${column + 1}`}: ${trimmed}`);
      });
      if (lines.length > 0) segments.push({ text: lines.join("\n"), row: rowCount });
    }
  } catch (error) {
    if (error instanceof CsvError) throw new ExtractionError(`The CSV file is not valid: ${error.message}`, { cause: error });
    throw error;
  } finally {
    source.destroy();
  }
  if (rowCount === 0) throw new ExtractionError("The CSV file has no data rows");
  return { segments, rowCount, encoding };
}

async function* slices(text: string, signal: AbortSignal | undefined): AsyncGenerator<string> {
  for (let at = 0; at < text.length; ) {
    if (at > 0) await nextTurn();
    signal?.throwIfAborted();
    let end = Math.min(at + SLICE_CHARS, text.length);
    // Never between the halves of a surrogate pair: the parser would turn each half into U+FFFD.
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end--;
    yield text.slice(at, end);
    at = end;
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
