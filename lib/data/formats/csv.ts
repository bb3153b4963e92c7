import { Readable } from "node:stream";
import { CsvError, parse } from "csv-parse";
import iconv from "iconv-lite";
import { countOutsideQuotes, detectDelimiter, firstLine } from "@/lib/csv-delimiter";
import { byteLimit, checkHeader, RowShaper } from "./limits";
import { dataSourceError, type OpenRowSourceOptions, type RowSource } from "./types";

/**
 * A CSV/TSV file, streamed: decoded (UTF-8 or the declared encoding, a byte-order mark dropped),
 * the delimiter detected from the header line when not given, parsed by csv-parse. Empty values are
 * null; a row shorter than the header is padded with nulls.
 */
export async function openCsv(input: Readable, options: OpenRowSourceOptions): Promise<RowSource> {
  const { limits } = options;
  const bytes = input.pipe(byteLimit(limits.maxBytes));
  input.on("error", (error) => bytes.destroy(error));
  const text = decode(bytes, options.encoding ?? "utf-8")[Symbol.asyncIterator]();

  if (options.delimiter !== undefined && ([...options.delimiter].length !== 1 || /[\r\n"]/.test(options.delimiter))) {
    bytes.destroy();
    throw dataSourceError("syntax", `The delimiter must be one character other than a quote or a line break, not ${JSON.stringify(options.delimiter)}`);
  }
  // The header line first (quoted line breaks included, never more than one line's limit): it gives
  // the delimiter, and a header with too many columns is refused before csv-parse splits it.
  let prefix = "";
  let prefixBytes = 0;
  const headerEnd = new LineEnd();
  while (headerEnd.find(prefix) === -1) {
    const next = await text.next();
    if (next.done) break;
    prefix += next.value;
    prefixBytes += Buffer.byteLength(next.value);
    if (headerEnd.find(prefix) === -1 && prefixBytes > limits.maxLineBytes) {
      bytes.destroy();
      throw dataSourceError("max_line_bytes", `The header line is longer than the limit of ${limits.maxLineBytes} bytes`);
    }
  }
  const delimiter = options.delimiter ?? detectDelimiter(prefix);
  const columns = countOutsideQuotes(firstLine(prefix), delimiter) + 1;
  if (columns > limits.maxColumns) {
    bytes.destroy();
    throw dataSourceError("max_columns", `The header has ${columns} columns; the limit is ${limits.maxColumns}`);
  }

  const parser = parse({
    delimiter,
    max_record_size: limits.maxLineBytes,
    relax_column_count: true,
    // A stray quote inside an unquoted field (5" pipe) is data, not a syntax error.
    relax_quotes: true,
    skip_empty_lines: true,
  });
  const source = Readable.from(rest(prefix, text));
  source.on("error", (error) => parser.destroy(error));
  source.pipe(parser);
  const records = (parser as AsyncIterable<string[]>)[Symbol.asyncIterator]();
  const close = () => {
    source.destroy();
    bytes.destroy();
    parser.destroy();
  };

  let header: string[];
  try {
    const first = await records.next();
    if (first.done) throw dataSourceError("no_header", "The file is empty: it has no header row");
    header = first.value;
    checkHeader(header, limits);
  } catch (error) {
    close();
    throw translate(error, 0);
  }
  const shaper = new RowShaper(header, limits);

  async function* rows(): AsyncGenerator<(string | null)[]> {
    try {
      while (true) {
        let next: IteratorResult<string[]>;
        try {
          next = await records.next();
        } catch (error) {
          throw translate(error, shaper.rows + 1);
        }
        if (next.done) return;
        const values: (string | null)[] = next.value;
        for (let i = 0; i < values.length; i++) if (values[i] === "") values[i] = null;
        yield shaper.shape(values);
      }
    } finally {
      close();
    }
  }
  return { header, rows: rows() };
}

function translate(error: unknown, row: number): unknown {
  if (!(error instanceof CsvError)) return error;
  if (error.code === "CSV_MAX_RECORD_SIZE") return dataSourceError("max_line_bytes", `a record is longer than the limit of ${parserLimit(error)} bytes`, row || undefined);
  return dataSourceError("syntax", `the CSV is not valid: ${error.message}`, row || undefined);
}

function parserLimit(error: CsvError): string {
  return /of (\d+)/.exec(error.message)?.[1] ?? "the record";
}

async function* rest(prefix: string, text: AsyncIterator<string>): AsyncGenerator<string> {
  if (prefix) yield prefix;
  for (let next = await text.next(); !next.done; next = await text.next()) yield next.value;
}

/** Text of a byte stream in `encoding`; invalid UTF-8 is refused (not replaced), as a wrong encoding would lose text. */
async function* decode(bytes: Readable, encoding: string): AsyncGenerator<string> {
  const utf8 = /^utf-?8$/i.test(encoding);
  if (!utf8 && !iconv.encodingExists(encoding)) throw dataSourceError("encoding", `Unknown encoding ${JSON.stringify(encoding)}`);
  const decoder = utf8 ? new TextDecoder("utf-8", { fatal: true }) : null;
  const legacy = utf8 ? null : iconv.getDecoder(encoding);
  try {
    for await (const chunk of bytes as AsyncIterable<Buffer>) {
      const piece = decoder ? decoder.decode(chunk, { stream: true }) : legacy!.write(chunk);
      if (piece) yield piece;
    }
    const tail = decoder ? decoder.decode() : (legacy!.end() ?? "");
    if (tail) yield tail;
  } catch (error) {
    if (error instanceof TypeError && decoder) {
      throw dataSourceError("encoding", "The file is not valid UTF-8: declare its encoding (for example windows-1252)");
    }
    throw error;
  }
}

/** Finds the first line break outside quotes in a growing text, scanning each character once. */
class LineEnd {
  private scanned = 0;
  private quoted = false;
  private end = -1;

  find(text: string): number {
    for (; this.end === -1 && this.scanned < text.length; this.scanned++) {
      const char = text[this.scanned];
      if (char === '"') this.quoted = !this.quoted;
      else if (!this.quoted && (char === "\n" || char === "\r")) this.end = this.scanned;
    }
    return this.end;
  }
}
