import type { DataTable, LoadResult } from "./contract";
import type { LoadReport } from "./load";
import type { TableEntry, TableReader } from "./tables";

/*
 * The catalog's and the loader's answers as the tables API sends them (lib/data/contract.ts): one
 * mapping for the routes and the /data page's first paint.
 */

export function dataTableRecord(entry: TableEntry & { readers: TableReader[] }): DataTable {
  return {
    name: entry.name,
    columns: entry.columns.map((c) => ({ name: c.name, type: c.type })),
    key_columns: [...entry.keyColumns],
    location_column: entry.location ? { name: entry.location.name, by: entry.location.by } : null,
    row_count: entry.rowCount,
    bytes: entry.bytes,
    last_load_at: entry.lastLoadAt?.toISOString() ?? null,
    created_at: entry.createdAt.toISOString(),
    readers: entry.readers.map((r) => ({ kind: r.kind, id: r.id, name: r.name })),
  };
}

export function loadResultRecord(report: LoadReport): LoadResult {
  return {
    load_id: report.loadId,
    table: report.table,
    mode: report.mode,
    rows_loaded: report.rowsLoaded,
    rows_skipped: report.rowsSkipped,
    bad_rows: report.badRows.map((b) => ({ row: b.row, column: b.column, value: b.value, message: b.message })),
    columns_added: report.columnsAdded,
    rebuilt: report.rebuilt,
    row_count: report.rowCount,
    bytes: report.bytes,
  };
}
