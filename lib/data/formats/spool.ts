import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { byteLimit } from "./limits";

/**
 * Formats whose index sits at the end (XLSX's zip directory, Parquet's footer) are written to a
 * temporary file first, under the byte limit, and read from there; `release` removes it.
 */
export async function spool(input: Readable, maxBytes: number, name: string): Promise<{ file: string; bytes: number; release: () => Promise<void> }> {
  const folder = await mkdtemp(path.join(tmpdir(), "quarry-data-"));
  const release = () => rm(folder, { recursive: true, force: true });
  const file = path.join(folder, name);
  let bytes = 0;
  try {
    await pipeline(input, byteLimit(maxBytes, (total) => (bytes = total)), createWriteStream(file));
  } catch (error) {
    await release();
    throw error;
  }
  return { file, bytes, release };
}

/**
 * `rows` whose `return()` also runs `release`: a generator stopped before its first step never
 * enters its own `finally`, and a spooled file must go all the same.
 */
export function releasing<T>(rows: AsyncGenerator<T>, release: () => Promise<void>): AsyncGenerator<T> {
  const stop = rows.return.bind(rows);
  rows.return = async (value) => {
    try {
      return await stop(value);
    } finally {
      await release();
    }
  };
  return rows;
}
