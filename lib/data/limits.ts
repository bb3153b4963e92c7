import "server-only";
import { config } from "@/lib/config";
import type { SourceLimits } from "./formats/types";

/** PostgreSQL's own bound on a table's columns. */
const MAX_COLUMNS = 1_600;
/** One value, and one record (a CSV record, an NDJSON line, an XLSX row): far above real data, far below memory. */
const MAX_FIELD_BYTES = 1024 ** 2;
const MAX_LINE_BYTES = 16 * 1024 ** 2;

/**
 * What one file may hold (an upload, a pipeline's batch, a pulled object), checked while it streams: no more bytes
 * or rows than the organization may hold in all its tables (QUARRY_DATA_MAX_BYTES, QUARRY_DATA_MAX_ROWS), and fixed
 * bounds on its shape, so a 100,000-column header or a 10 GB line is refused, never buffered.
 */
export function sourceLimits(): SourceLimits {
  const { maxBytes, maxRows } = config().data;
  return { maxBytes, maxRows, maxColumns: MAX_COLUMNS, maxFieldBytes: MAX_FIELD_BYTES, maxLineBytes: MAX_LINE_BYTES };
}
