import "server-only";
import { defineOperation } from "@/lib/operation";
import * as contract from "./contract";
import type { LoadReport } from "./load";
import { TableInUse, type TableEntry, type TableReader, deleteTable, getTable, listTables } from "./tables";
import * as uploads from "./uploads";

/* The tables API (contract.ts): thin glue from the endpoints to tables.ts, uploads.ts and load.ts. */

const toDataTable = (table: TableEntry & { readers: TableReader[] }): contract.DataTable => ({
  name: table.name,
  columns: table.columns,
  key_columns: table.keyColumns,
  location_column: table.location,
  row_count: table.rowCount,
  bytes: table.bytes,
  last_load_at: table.lastLoadAt?.toISOString() ?? null,
  created_at: table.createdAt.toISOString(),
  readers: table.readers,
});

const toLoadResult = (report: LoadReport): contract.LoadResult => ({
  load_id: report.loadId,
  table: report.table,
  mode: report.mode,
  rows_loaded: report.rowsLoaded,
  rows_skipped: report.rowsSkipped,
  bad_rows: report.badRows,
  columns_added: report.columnsAdded,
  rebuilt: report.rebuilt,
  row_count: report.rowCount,
  bytes: report.bytes,
});

export const listDataTables = defineOperation(contract.listDataTables, async ({ principal }) => ({ items: (await listTables(principal)).map(toDataTable) }));

export const getDataTable = defineOperation(contract.getDataTable, async ({ principal, params }) => toDataTable(await getTable(principal, params.name)));

export const createUpload = defineOperation(contract.createUpload, async ({ req, principal, query }) => {
  // The file is the raw request body, streamed: only route() has one.
  if (!req) throw new Error("createUpload streams the HTTP request body; serve it with route()");
  const length = req.headers.get("content-length");
  return uploads.createUpload(principal, { body: req.body, declaredLength: length !== null && /^\d+$/.test(length) ? Number(length) : null }, query);
});

export const previewUpload = defineOperation(contract.previewUpload, ({ principal, params, query }) => uploads.previewUpload(principal, params.id, query));

export const loadDataTable = defineOperation(contract.loadDataTable, async ({ principal, body }) => {
  const report = await uploads.loadUpload(
    principal,
    body.upload_id,
    {
      table: body.table,
      mode: body.mode,
      columns: body.columns,
      keyColumns: body.key_columns,
      locationColumn: body.location_column,
      onBadRow: body.on_bad_row,
      addNewColumns: body.add_new_columns,
    },
    { sheet: body.sheet, delimiter: body.delimiter, encoding: body.encoding },
  );
  return toLoadResult(report);
});

export const dropDataTable = defineOperation(contract.dropDataTable, async ({ principal, params, query }) => {
  try {
    await deleteTable(principal, params.name, { force: query.force, actor: principal });
  } catch (error) {
    // The readers as data, for the page to list: {"detail": {"message", "readers"}}.
    if (error instanceof TableInUse) return Response.json({ detail: { message: error.message, readers: error.readers } }, { status: 409 });
    throw error;
  }
});
