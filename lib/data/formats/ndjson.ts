import type { Readable } from "node:stream";
import { byteLimit, checkHeader, RowShaper } from "./limits";
import { dataSourceError, type OpenRowSourceOptions, type RowSource } from "./types";
import { renderValue } from "./render";

const NEWLINE = 0x0a;

/**
 * NDJSON, one JSON object per line, read line by line: a line is never held beyond `maxLineBytes`.
 * The first object's keys are the header; a later object may leave keys out (null) but not add one.
 */
export async function openNdjson(input: Readable, options: OpenRowSourceOptions): Promise<RowSource> {
  const { limits } = options;
  const bytes = input.pipe(byteLimit(limits.maxBytes));
  input.on("error", (error) => bytes.destroy(error));
  const lines = splitLines(bytes, limits.maxLineBytes)[Symbol.asyncIterator]();

  let first: Record<string, unknown>;
  try {
    const next = await lines.next();
    if (next.done) throw dataSourceError("no_header", "The file is empty: it has no JSON object");
    first = parseObject(next.value, 1);
    checkHeader(Object.keys(first), limits);
  } catch (error) {
    bytes.destroy();
    throw error;
  }
  const header = Object.keys(first);
  const position = new Map(header.map((name, index) => [name, index]));
  const shaper = new RowShaper(header, limits);

  const toRow = (object: Record<string, unknown>, row: number): (string | null)[] => {
    const values: (string | null)[] = new Array<string | null>(header.length).fill(null);
    for (const key in object) {
      const index = position.get(key);
      if (index === undefined) throw dataSourceError("extra_values", `the key ${JSON.stringify(key)} is not among the first object's keys`, row);
      values[index] = renderValue(object[key], row);
    }
    return values;
  };

  async function* rows(): AsyncGenerator<(string | null)[]> {
    try {
      yield shaper.shape(toRow(first, 1));
      for (let next = await lines.next(); !next.done; next = await lines.next()) {
        const row = shaper.rows + 1;
        yield shaper.shape(toRow(parseObject(next.value, row), row));
      }
    } finally {
      bytes.destroy();
    }
  }
  return { header, rows: rows() };
}

function parseObject(line: string, row: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw dataSourceError("syntax", `the line is not JSON: ${(error as Error).message}`, row);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw dataSourceError("syntax", "the line is not a JSON object", row);
  return value as Record<string, unknown>;
}

/** Non-blank lines of a byte stream as text, refusing a line longer than `maxLineBytes` as soon as it is. */
async function* splitLines(bytes: Readable, maxLineBytes: number): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let row = 1;
  const line = (tail: Buffer): string | undefined => {
    const whole = pending.length === 0 ? tail : Buffer.concat([...pending, tail]);
    pending = [];
    pendingBytes = 0;
    let text: string;
    try {
      text = decoder.decode(whole);
    } catch {
      throw dataSourceError("encoding", "the line is not valid UTF-8", row);
    }
    text = text.trim();
    if (text === "") return undefined;
    row++;
    return text;
  };
  for await (const chunk of bytes as AsyncIterable<Buffer>) {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE, start); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      if (pendingBytes + end - start > maxLineBytes) throw dataSourceError("max_line_bytes", `the line is longer than the limit of ${maxLineBytes} bytes`, row);
      const text = line(chunk.subarray(start, end));
      if (text !== undefined) yield text;
      start = end + 1;
    }
    if (start < chunk.length) {
      pendingBytes += chunk.length - start;
      if (pendingBytes > maxLineBytes) throw dataSourceError("max_line_bytes", `the line is longer than the limit of ${maxLineBytes} bytes`, row);
      pending.push(chunk.subarray(start));
    }
  }
  const text = line(Buffer.alloc(0));
  if (text !== undefined) yield text;
}
