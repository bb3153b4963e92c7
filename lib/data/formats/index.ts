import { Readable } from "node:stream";
import { openCsv } from "./csv";
import { openNdjson } from "./ndjson";
import { openParquet } from "./parquet";
import type { OpenRowSourceOptions, RowSource } from "./types";
import { openXlsx } from "./xlsx";

export { COLUMN_TYPES, CellValueError, TypeInference, parseCell, tryParseCell, type ColumnType } from "./infer";
export { RESERVED_COLUMN_NAMES, columnIdentifier, columnIdentifiers } from "./identifiers";
export { listSheets } from "./xlsx";
export { DataSourceError, SOURCE_FORMATS, type DataSourceErrorCode, type OpenRowSourceOptions, type RowSource, type SourceFormat, type SourceLimits } from "./types";

/**
 * A file as a header and rows of text, streamed under `options.limits` (README.md). Header-level
 * problems (no header, too many columns, an unknown sheet) are thrown here; row-level ones while
 * iterating `rows`, as a DataSourceError naming the row. Iterate `rows` to the end or stop it
 * (`break`, `rows.return()`) so the input and any temporary file are released.
 */
export async function openRowSource(input: NodeJS.ReadableStream | Readable, options: OpenRowSourceOptions): Promise<RowSource> {
  const stream = input instanceof Readable ? input : Readable.from(input as AsyncIterable<Buffer>);
  switch (options.format) {
    case "csv":
      return openCsv(stream, options);
    case "ndjson":
      return openNdjson(stream, options);
    case "parquet":
      return openParquet(stream, options);
    case "xlsx":
      return openXlsx(stream, options);
  }
}
