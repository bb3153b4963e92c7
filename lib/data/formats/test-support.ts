import { createReadStream } from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { DataSourceError, openRowSource, type OpenRowSourceOptions, type SourceLimits } from "./index";

/** Limits loose enough for the fixtures; a test tightens the one it checks. */
export const LOOSE: SourceLimits = { maxBytes: 1e9, maxRows: 1e7, maxColumns: 1000, maxFieldBytes: 1e6, maxLineBytes: 1e6 };

export const fixture = (name: string) => createReadStream(path.join(import.meta.dirname, "fixtures", name));

/** Header and every row of a source. */
export async function readAll(input: NodeJS.ReadableStream | Readable, options: Omit<OpenRowSourceOptions, "limits"> & { limits?: Partial<SourceLimits> }) {
  const source = await openRowSource(input, { ...options, limits: { ...LOOSE, ...options.limits } });
  const rows: (string | null)[][] = [];
  for await (const row of source.rows) rows.push(row);
  return { header: source.header, rows };
}

/** The DataSourceError `work` fails with (the test fails when it does not). */
export async function sourceError(work: Promise<unknown>): Promise<DataSourceError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof DataSourceError) return error;
    throw error;
  }
  throw new Error("expected a DataSourceError, and the work succeeded");
}

/**
 * An endless stream of `byte` (a line with no end) that counts what was pulled from it: a reader that
 * buffered it whole would never stop.
 */
export function endless(byte: string, prefix = ""): { stream: Readable; pulled: () => number } {
  let pulled = 0;
  const chunk = Buffer.alloc(64 * 1024, byte);
  const stream = new Readable({
    read() {
      if (pulled === 0 && prefix) {
        pulled += prefix.length;
        this.push(Buffer.from(prefix));
        return;
      }
      pulled += chunk.length;
      this.push(chunk);
    },
  });
  return { stream, pulled: () => pulled };
}
