import { DomainError, type ErrorKind } from "@/lib/errors";

/** The file formats a table can be loaded from. */
export const SOURCE_FORMATS = ["csv", "xlsx", "parquet", "ndjson"] as const;
export type SourceFormat = (typeof SOURCE_FORMATS)[number];

/**
 * What one file may hold, checked while it streams (never after reading it whole). Bytes are the
 * file's own bytes for `maxBytes`; the others count UTF-8 bytes of the decoded text.
 */
export interface SourceLimits {
  /** The file's size as received (an XLSX's inflated XML is bounded separately: xlsx.ts). */
  maxBytes: number;
  /** Data rows, the header not counted. */
  maxRows: number;
  /** Columns of the header, and of any row. */
  maxColumns: number;
  /** One value. */
  maxFieldBytes: number;
  /** One record: a CSV record (quoted newlines included), an NDJSON line. (An XLSX row is bounded by columns × field bytes.) */
  maxLineBytes: number;
}

/**
 * A file as a header and rows of text. Values are the text as read (CSV, XLSX strings) or rendered
 * to canonical text (numbers, booleans, dates of XLSX, NDJSON and Parquet); null is an empty or
 * missing value. Each row has exactly `header.length` values. `rows` can be iterated once.
 */
export interface RowSource {
  header: string[];
  rows: AsyncIterable<(string | null)[]>;
}

export interface OpenRowSourceOptions {
  format: SourceFormat;
  /** CSV: one character; detected from the header line when absent (comma, semicolon, tab, pipe). */
  delimiter?: string;
  /** CSV: the file's declared encoding (any iconv-lite name); UTF-8 when absent. */
  encoding?: string;
  /** XLSX: the sheet's name; the first sheet when absent. */
  sheet?: string;
  limits: SourceLimits;
}

export type DataSourceErrorCode =
  | "max_bytes"
  | "max_rows"
  | "max_columns"
  | "max_field_bytes"
  | "max_line_bytes"
  /** An XLSX whose content inflates beyond what its size allows (a zip bomb). */
  | "expansion"
  /** The bytes are not text in the declared encoding, or the encoding is unknown. */
  | "encoding"
  /** The file is not valid in its format (a broken quote, a line that is not JSON, not a zip, ...). */
  | "syntax"
  /** A row has more values than the header has names. */
  | "extra_values"
  | "no_header"
  | "unknown_sheet";

const LIMIT_CODES: ReadonlySet<DataSourceErrorCode> = new Set(["max_bytes", "max_rows", "max_columns", "max_field_bytes", "max_line_bytes", "expansion"]);

const DATA_SOURCE_ERROR = Symbol.for("quarry.DataSourceError");

/**
 * A file that cannot be read as rows: a limit passed (413) or content that is not what its format
 * says (422). `row` is the 1-based data row (the header is not a row) when one is to blame.
 * Create with `dataSourceError`; test with `instanceof DataSourceError`.
 */
export class DataSourceError extends DomainError {
  static override readonly kind: ErrorKind | null = null;
  readonly [DATA_SOURCE_ERROR] = true;

  static override [Symbol.hasInstance](value: unknown): boolean {
    if (typeof value !== "object" || value === null || (value as Record<symbol, unknown>)[DATA_SOURCE_ERROR] !== true) return false;
    return this.kind === null || (value as DomainError).kind === this.kind;
  }

  constructor(
    readonly code: DataSourceErrorCode,
    message: string,
    readonly row?: number,
  ) {
    super(message);
  }
}
export class DataSourceTooLarge extends DataSourceError {
  static override readonly kind = "too_large";
}
export class DataSourceInvalid extends DataSourceError {
  static override readonly kind = "invalid";
}

export function dataSourceError(code: DataSourceErrorCode, message: string, row?: number): DataSourceError {
  const text = row === undefined ? message : `Row ${row}: ${message}`;
  return LIMIT_CODES.has(code) ? new DataSourceTooLarge(code, text, row) : new DataSourceInvalid(code, text, row);
}
