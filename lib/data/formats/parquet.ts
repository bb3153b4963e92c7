import type { Readable } from "node:stream";
import { compressors } from "hyparquet-compressors";
import { asyncBufferFromFile, parquetMetadataAsync, parquetRead, parquetSchema, type FileMetaData } from "hyparquet";
import { checkHeader, RowShaper } from "./limits";
import { renderValue } from "./render";
import { releasing, spool } from "./spool";
import { dataSourceError, type OpenRowSourceOptions, type RowSource } from "./types";

/**
 * A row group is decoded whole (a column chunk cannot be read in part), so its declared size bounds
 * the memory a file can take; writers' defaults (pyarrow, Spark: 64-128 MB) stay below.
 */
export const PARQUET_MAX_ROW_GROUP_BYTES = 256 * 1024 * 1024;

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** An instant as PostgreSQL text, to the microsecond, in UTC. */
function utcText(micros: bigint): string {
  let seconds = micros / 1_000_000n;
  if (seconds * 1_000_000n > micros) seconds -= 1n; // floor for instants before 1970
  const fraction = String(micros - seconds * 1_000_000n).padStart(6, "0");
  const date = new Date(Number(seconds) * 1000);
  return `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}.${fraction}+00:00`;
}

// Dates and timestamps straight to text: hyparquet's default Date objects would drop microseconds.
const PARSERS = {
  timestampFromMilliseconds: (millis: bigint) => utcText(millis * 1000n),
  timestampFromMicroseconds: (micros: bigint) => utcText(micros),
  timestampFromNanoseconds: (nanos: bigint) => utcText(nanos / 1000n),
  dateFromDays: (days: number) => utcText(BigInt(days) * 86_400_000_000n).slice(0, 10),
};

/**
 * A Parquet file, spooled to a temporary file (its footer is at the end) and read one row group at a
 * time. Top-level columns are the header; a nested column is one JSON value. Timestamps are UTC
 * instants, or wall times without a zone when the file says they are not adjusted to UTC.
 */
export async function openParquet(input: Readable, options: OpenRowSourceOptions): Promise<RowSource> {
  const { limits } = options;
  const { file: path, release } = await spool(input, limits.maxBytes, "upload.parquet");
  let metadata: FileMetaData;
  let header: string[];
  let localTime: boolean[];
  const file = await asyncBufferFromFile(path);
  try {
    try {
      metadata = await parquetMetadataAsync(file);
    } catch (error) {
      throw dataSourceError("syntax", `The file is not valid Parquet: ${(error as Error).message}`);
    }
    const columns = parquetSchema(metadata).children;
    header = columns.map((column) => column.element.name);
    checkHeader(header, limits);
    localTime = columns.map(({ element }) => element.logical_type?.type === "TIMESTAMP" && !element.logical_type.isAdjustedToUTC);
    metadata.row_groups.forEach((group, index) => {
      if (group.total_byte_size > BigInt(PARQUET_MAX_ROW_GROUP_BYTES)) {
        throw dataSourceError("expansion", `Row group ${index + 1} holds ${group.total_byte_size} bytes uncompressed; the limit is ${PARQUET_MAX_ROW_GROUP_BYTES} (write the file with smaller row groups)`);
      }
    });
    if (metadata.num_rows > BigInt(limits.maxRows)) throw dataSourceError("max_rows", `The file has ${metadata.num_rows} rows; the limit is ${limits.maxRows}`);
  } catch (error) {
    await release();
    throw error;
  }
  const shaper = new RowShaper(header, limits);

  async function* rows(): AsyncGenerator<(string | null)[]> {
    try {
      let rowStart = 0;
      for (const group of metadata.row_groups) {
        const rowEnd = rowStart + Number(group.num_rows);
        let decoded: unknown[][] = [];
        try {
          await parquetRead({ file, metadata, rowStart, rowEnd, compressors, parsers: PARSERS, rowFormat: "array", onComplete: (rows) => (decoded = rows) });
        } catch (error) {
          throw dataSourceError("syntax", `The Parquet file cannot be read: ${(error as Error).message}`, shaper.rows + 1);
        }
        rowStart = rowEnd;
        for (const values of decoded) {
          const row = shaper.rows + 1;
          const text = values.map((value, column) => {
            const rendered = renderValue(value, row);
            return rendered !== null && localTime[column] ? rendered.replace(/\+00:00$/, "") : rendered;
          });
          yield shaper.shape(text);
        }
      }
    } finally {
      await release();
    }
  }
  return { header, rows: releasing(rows(), release) };
}
