import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";
import { COLUMN_TYPES } from "./formats/infer";
import { SOURCE_FORMATS } from "./formats/types";

/*
 * The tables API (issue 42 §1, §2, §7; docs/data.md): the organization's tables, a file uploaded and
 * read into a preview (header, first rows, types inferred over every row), its load into a table, and
 * a drop. Drafted by data-surface for the /data page from the shapes of lib/data/README.md; data-core
 * owns it and the routes (lib/data/operations.ts); the page reads it through components/data/browser-data-api.ts.
 */

const tags = ["Data"];
const ts = z.iso.datetime().describe("ISO 8601, UTC");
const TableParams = z.object({ name: z.string().min(1).max(63).describe("The table's stable name") });
const UploadParams = z.object({ id: z.string().min(1).max(100) });

export const ColumnTypeSchema = z.enum(COLUMN_TYPES).describe("timestamptz: timestamp with time zone").meta({ id: "DataColumnType" });
const Identifier = z.string().min(1).max(63).describe("lower-case letters, digits and '_', starting with a letter or '_' (docs/data.md \"Names\")");

export const TableReader = z
  .object({ kind: z.enum(["dashboard", "embed", "alert_rule"]), id: z.string(), name: z.string() })
  .describe("A published dashboard, a live embed of one, or an alert rule that reads the table")
  .meta({ id: "DataTableReader" });

export const DataTable = z
  .object({
    name: z.string(),
    columns: z.array(z.object({ name: z.string(), type: ColumnTypeSchema })),
    key_columns: z.array(z.string()).describe("upsert's key, when the table has one"),
    location_column: z.object({ name: z.string(), by: z.enum(["id", "code"]) }).nullable().describe("Members limited to some locations see only their rows"),
    row_count: z.number().int(),
    bytes: z.number().int(),
    last_load_at: ts.nullable(),
    created_at: ts,
    readers: z.array(TableReader),
  })
  .meta({ id: "DataTable" });
export type DataTable = z.infer<typeof DataTable>;

export const DataTableList = z.object({ items: z.array(DataTable) }).meta({ id: "DataTableList" });

export const listDataTables = defineEndpoint({
  method: "get",
  path: "/api/v1/data/tables",
  summary: "The organization's tables: columns, types, rows, size, last load, readers",
  tags,
  access: "user",
  response: DataTableList,
});

export const getDataTable = defineEndpoint({
  method: "get",
  path: "/api/v1/data/tables/{name}",
  summary: "One of the organization's tables: columns, types, rows, size, last load, readers",
  tags,
  access: "user",
  params: TableParams,
  response: DataTable,
  errors: [404],
});

export const UploadQuery = z.object({
  filename: z.string().min(1).max(255).describe("The file's name as the user chose it"),
  format: z.enum(SOURCE_FORMATS).describe("csv (TSV and any delimiter too), xlsx, parquet or ndjson"),
  delimiter: z.string().length(1).optional().describe("CSV: the delimiter; detected from the header line when absent"),
  encoding: z.string().min(1).max(40).optional().describe("CSV: the declared encoding; UTF-8 when absent"),
  sheet: z.string().min(1).max(200).optional().describe("XLSX: the sheet; the first when absent"),
});

export const PreviewQuery = UploadQuery.omit({ filename: true, format: true });

export const UploadPreview = z
  .object({
    id: z.string(),
    filename: z.string(),
    format: z.enum(SOURCE_FORMATS),
    bytes: z.number().int(),
    sheets: z.array(z.string()).nullable().describe("XLSX: the workbook's sheets"),
    sheet: z.string().nullable(),
    delimiter: z.string().nullable().describe("CSV: the delimiter read with"),
    encoding: z.string().nullable(),
    header: z.array(z.string()),
    names: z.array(z.string()).describe("A column name per header (columnIdentifier), collisions resolved"),
    types: z.array(ColumnTypeSchema).describe("Each column's type inferred over every row of the file"),
    rows: z.array(z.array(z.string().nullable())).describe("The first rows, values as read (null: empty)"),
    row_count: z.number().int(),
    expires_at: ts.describe("The upload is kept until then for a load"),
  })
  .meta({ id: "DataUploadPreview" });
export type UploadPreview = z.infer<typeof UploadPreview>;

export const createUpload = defineEndpoint({
  method: "post",
  path: "/api/v1/data/uploads",
  summary: "Upload a file to load (raw body, streamed) and read its preview",
  description: "The request body is the file's bytes (not multipart). The answer shows the header, the first rows and each column's type inferred over the whole file; load it with POST /api/v1/data/tables.",
  tags,
  access: "admin",
  keyScope: "data:write",
  query: UploadQuery,
  rawBody: true,
  response: UploadPreview,
  errors: [413, 415, 422],
});

export const previewUpload = defineEndpoint({
  method: "get",
  path: "/api/v1/data/uploads/{id}",
  summary: "Read an upload again with another sheet, delimiter or encoding",
  tags,
  access: "admin",
  keyScope: "data:write",
  params: UploadParams,
  query: PreviewQuery,
  response: UploadPreview,
  errors: [404, 422],
});

export const LoadBody = z.object({
  upload_id: z.string().min(1).max(100),
  table: Identifier,
  mode: z.enum(["create", "append", "replace", "upsert"]),
  columns: z.array(z.object({ name: Identifier, type: ColumnTypeSchema, from: z.number().int().min(0).describe("The source column's index") })).min(1),
  key_columns: z.array(Identifier).optional(),
  location_column: z.object({ name: Identifier, by: z.enum(["id", "code"]) }).optional(),
  on_bad_row: z.enum(["fail", "skip"]).default("fail"),
  add_new_columns: z.boolean().default(false),
  sheet: z.string().min(1).max(200).optional(),
  delimiter: z.string().length(1).optional(),
  encoding: z.string().min(1).max(40).optional(),
});

export const LoadResult = z
  .object({
    load_id: z.string(),
    table: z.string(),
    mode: z.enum(["create", "append", "replace", "upsert"]),
    rows_loaded: z.number().int(),
    rows_skipped: z.number().int(),
    bad_rows: z.array(z.object({ row: z.number().int(), column: z.string(), value: z.string().nullable(), message: z.string() })).describe("The first 1,000 rows skipped"),
    columns_added: z.array(z.string()),
    rebuilt: z.boolean(),
    row_count: z.number().int(),
    bytes: z.number().int(),
  })
  .meta({ id: "DataLoadResult" });
export type LoadResult = z.infer<typeof LoadResult>;

export const loadDataTable = defineEndpoint({
  method: "post",
  path: "/api/v1/data/tables",
  summary: "Load an upload into a table (create, append, replace or upsert)",
  description: "A value that does not fit its column answers 422 naming its row, column and value, and nothing of the load is kept; on_bad_row=skip loads the others and lists each skipped row.",
  tags,
  access: "admin",
  keyScope: "data:write",
  body: LoadBody,
  response: LoadResult,
  errors: [404, 409, 413, 415, 422],
});

export const DropQuery = z.object({
  force: z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1").default(false).describe("Drop even while dashboards, embeds or alert rules read it"),
});

export const dropDataTable = defineEndpoint({
  method: "delete",
  path: "/api/v1/data/tables/{name}",
  summary: "Drop a table (refused while something reads it, unless forced)",
  description: "409 with `detail.readers` listing the dashboards, embeds and alert rules that read it.",
  tags,
  access: "admin",
  keyScope: "data:write",
  params: TableParams,
  query: DropQuery,
  status: 204,
  errors: [404, 409],
});
