import "server-only";
import { config } from "@/lib/config";
import { type BulkTx, withTenantBulk } from "@/lib/db/bulk";
import { type TenantScope, withTenant } from "@/lib/db/tenant";
import { Conflict, Invalid, NotFound, TooLarge, type ValidationItem } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { log } from "@/lib/log";
import { COLUMN_TYPES, type ColumnType, tryParseCell } from "./formats/infer";
import type { RowSource } from "./formats/types";
import { columnNameProblem, tableNameProblem } from "./names";
import { forgetOwnReaderTables } from "@/lib/db/own-tables";
import { sendRollupRefresh } from "@/lib/rollups/jobs";
import { type AuditActor, auditStatement } from "@/lib/audit/record";
import { SQL_TYPES, type TableColumn, type TableShape, addColumns, addKey, createTable, dropTable, lockTable, physicalColumns, qualifiedTable, quoteIdent } from "./storage";
import { BUMP_WAREHOUSE_VERSION, type TableEntry, findTableEntry, organizationUsage } from "./tables";
import { TextCopyWriter } from "./text-copy";

/*
 * Loading rows into an organization's table (docs/data.md "Loads"): the source streams into a
 * staging table by binary COPY in chunks (never held whole), every value checked by the one rule of
 * lib/data/formats (tryParseCell, once per value); then, as quarry_app under the table's policies,
 * statements of bounded size move the rows. All of it is one transaction: a bad value (onBadRow "fail"), a limit passed or a killed
 * process leaves the table as it was, and a reader sees the old rows or the new, never half.
 */

export type LoadMode = "create" | "append" | "replace" | "upsert";

export interface LoadColumn {
  name: string;
  type: ColumnType;
  /** The source column's index. */
  from: number;
}

export interface LoadRequest {
  table: string;
  mode: LoadMode;
  columns: LoadColumn[];
  keyColumns?: string[];
  locationColumn?: { name: string; by: "id" | "code" };
  onBadRow: "fail" | "skip";
  /** append/upsert: add the request's columns the table lacks (otherwise they are refused). */
  addNewColumns?: boolean;
  /** Who loads (a person or API key, or a job as `{ system }`), for the history and the audit log. */
  actor?: AuditActor;
  /**
   * Runs in the load's transaction after the rows moved, before it commits: what must be kept exactly when the rows
   * are (an ingest batch's Idempotency-Key and answer, a pull run's outcome and cursor; lib/data/pipes).
   */
  withinLoad?: (tx: BulkTx, report: LoadReport) => Promise<void>;
}

/** A row a load refused: its 1-based data row (the header is not a row), the column, the value as read. */
export interface BadRow {
  row: number;
  column: string;
  value: string | null;
  message: string;
}

export interface LoadReport {
  loadId: string;
  table: string;
  mode: LoadMode;
  rowsLoaded: number;
  rowsSkipped: number;
  /** The first BAD_ROWS_REPORTED refused rows (rowsSkipped counts all). */
  badRows: BadRow[];
  columnsAdded: string[];
  /** The table's shape changed (a replace with other columns or types): it was made anew. */
  rebuilt: boolean;
  rowCount: number;
  bytes: number;
}

/** Refused rows a report lists one by one; more are counted. */
export const BAD_ROWS_REPORTED = 1_000;
/** A staging COPY is sent when it holds this much (bounds the memory a load holds at once). */
const COPY_CHUNK_BYTES = 4 * 1024 * 1024;
/** Qualified by pg_temp: its definitions are then known to be temporary ones, which the embedded analytics copy ignores (lib/db/analytics-copy.ts). */
const STAGING = "pg_temp.quarry_load_staging";
/** Staged rows (by ordinal) one statement of the move inserts: a few seconds' work on the embedded engine at most. */
const MOVE_BATCH_ROWS = 50_000;

/** A value that does not fit its column: 422 naming the row, column and value; nothing of the load is kept. */
export class BadValue extends Invalid {
  constructor(readonly bad: BadRow) {
    super([{ loc: ["rows", bad.row, bad.column], msg: `Row ${bad.row}, column "${bad.column}": ${bad.message}`, type: "bad_value" }]);
  }
}

/** Loads `source` into the organization's table as `request` says; throws before any work when a limit leaves no room. */
export async function loadTable(scope: TenantScope, request: LoadRequest, source: RowSource, onProgress?: (rows: number, bytes: number) => void): Promise<LoadReport> {
  requestProblems(request, source.header.length);
  const limits = config().data;
  const { existing, usage, timeZone } = await withTenant(scope, async (tx) => ({
    existing: await findTableEntry(tx, request.table),
    usage: await organizationUsage(tx),
    timeZone: (await tx.$queryRawUnsafe<{ time_zone: string }[]>("SELECT time_zone FROM organizations WHERE id = quarry_current_org()"))[0]?.time_zone ?? "UTC",
  }));
  if (request.mode === "create" && existing) throw new Conflict(`Table "${request.table}" exists; load it with append, replace or upsert`);
  if (request.mode !== "create" && !existing) throw new NotFound(`Table "${request.table}" not found`);
  if (request.mode === "create" && usage.tables >= limits.maxTables) throw new TooLarge(`The organization has ${usage.tables} tables, its limit (QUARRY_DATA_MAX_TABLES=${limits.maxTables}); drop one first`);
  const rowsBefore = usage.rows - (request.mode === "replace" && existing ? existing.rowCount : 0);
  const bytesBefore = usage.bytes - (request.mode === "replace" && existing ? existing.bytes : 0);
  if (rowsBefore >= limits.maxRows) throw new TooLarge(`The organization's tables hold ${usage.rows} rows, its limit (QUARRY_DATA_MAX_ROWS=${limits.maxRows})`);
  if (bytesBefore >= limits.maxBytes) throw new TooLarge(`The organization's tables take ${usage.bytes} bytes, its limit (QUARRY_DATA_MAX_BYTES=${limits.maxBytes})`);
  const plan = planLoad(request, existing);
  const loadId = newId("load");
  let lastOrdinal = 0;
  const report: LoadReport = { loadId, table: request.table, mode: request.mode, rowsLoaded: 0, rowsSkipped: 0, badRows: [], columnsAdded: plan.added.map((c) => c.name), rebuilt: plan.rebuild, rowCount: 0, bytes: 0 };
  let rollupsDeclared = false;
  try {
    await withTenantBulk(
      scope,
      async (tx) => {
        await lockTable(tx, scope.orgId, request.table);
        // Timestamps without a zone are the organization's local time (docs/data.md "Types"); set here, as quarry_app may not.
        await tx.query("SELECT set_config('TimeZone', $1, true) AS zone", [timeZone]);
        const physical = await physicalColumns(tx, scope.orgId, request.table);
        if ((physical === null) !== (existing === null) || (existing && physical?.join() !== existing.columns.map((c) => c.name).join())) {
          throw new Conflict(`Table "${request.table}" changed while this load started; try again`);
        }
        lastOrdinal = await stage(tx, request, source, { maxRows: limits.maxRows - rowsBefore, report, onProgress });
        if (plan.create) await createTable(tx, scope.orgId, request.table, plan.shape);
        if (plan.rebuild) {
          await dropTable(tx, scope.orgId, request.table);
          await createTable(tx, scope.orgId, request.table, plan.shape);
        }
        await addColumns(tx, scope.orgId, request.table, plan.added);
        if (plan.newKey) await addKey(tx, scope.orgId, request.table, plan.shape.keyColumns);
      },
      async (tx) => {
        await move(tx, scope.orgId, request, plan, lastOrdinal);
        const table = qualifiedTable(scope.orgId, request.table);
        const [size] = await tx.query<{ rows: string; bytes: string }>(`SELECT (SELECT count(*) FROM ${table})::text AS rows, pg_total_relation_size('${table.replaceAll("'", "''")}'::regclass)::text AS bytes`);
        report.rowCount = Number(size.rows);
        report.bytes = Number(size.bytes);
        if (bytesBefore + report.bytes > limits.maxBytes) {
          throw new TooLarge(`The load would take the organization's tables to ${bytesBefore + report.bytes} bytes, over its limit (QUARRY_DATA_MAX_BYTES=${limits.maxBytes})`);
        }
        await tx.exec(
          `INSERT INTO org_tables (org_id, name, columns, key_columns, location_column, location_by, row_count, bytes, last_load_at)
           VALUES (quarry_current_org(), $1, $2::jsonb, $3::text[], $4, $5, $6, $7, now())
           ON CONFLICT (org_id, name) DO UPDATE SET columns = EXCLUDED.columns, key_columns = EXCLUDED.key_columns, location_column = EXCLUDED.location_column,
             location_by = EXCLUDED.location_by, row_count = EXCLUDED.row_count, bytes = EXCLUDED.bytes, last_load_at = EXCLUDED.last_load_at`,
          [request.table, JSON.stringify(plan.shape.columns), plan.shape.keyColumns, plan.shape.location?.name ?? null, plan.shape.location?.by ?? null, report.rowCount, report.bytes],
        );
        // A replace that moved no row still changed what readers see when the table had rows.
        if (report.rowsLoaded === 0) await tx.exec(BUMP_WAREHOUSE_VERSION);
        await tx.exec(
          `INSERT INTO org_table_loads (org_id, id, table_name, mode, state, rows_loaded, rows_skipped, bytes, actor, finished_at)
           VALUES (quarry_current_org(), $1, $2, $3, 'done', $4, $5, $6, $7, now())`,
          [loadId, request.table, request.mode, report.rowsLoaded, report.rowsSkipped, report.bytes, actorName(request.actor)],
        );
        if (request.actor) {
          // In the load's own transaction: a load that rolls back leaves no row, one that commits always has its row.
          const audit = auditStatement({
            actor: request.actor,
            action: "data_table.load",
            target: { id: request.table, name: request.table },
            after: { loadId, mode: request.mode, rowsLoaded: report.rowsLoaded, rowsSkipped: report.rowsSkipped, columns: plan.shape.columns, rowCount: report.rowCount },
          });
          await tx.exec(audit.sql, audit.params);
        }
        await request.withinLoad?.(tx, report);
        [{ rollupsDeclared }] = await tx.query<{ rollupsDeclared: boolean }>(`SELECT EXISTS (SELECT 1 FROM rollups) AS "rollupsDeclared"`);
      },
    );
  } catch (error) {
    await recordFailure(scope, loadId, request, error);
    throw error;
  }
  forgetOwnReaderTables(scope.orgId);
  // The load moved the warehouse version, so every rollup of the organization is stale: rebuilt now rather than
  // when a viewer first finds it so (the tables answer meanwhile, exactly).
  if (rollupsDeclared) await sendRollupRefresh(scope.orgId, { always: true });
  return report;
}

interface LoadPlan {
  shape: TableShape;
  create: boolean;
  /** replace with another shape: the table is made anew (a type change reloads). */
  rebuild: boolean;
  added: TableColumn[];
  newKey: boolean;
}

function requestProblems(request: LoadRequest, sourceColumns: number): void {
  const items: ValidationItem[] = [];
  const tableProblem = tableNameProblem(request.table);
  if (tableProblem) items.push({ loc: ["table"], msg: tableProblem, type: "value_error" });
  const seen = new Set<string>();
  request.columns.forEach((column, i) => {
    const problem = columnNameProblem(column.name);
    if (problem) items.push({ loc: ["columns", i, "name"], msg: problem, type: "value_error" });
    if (seen.has(column.name)) items.push({ loc: ["columns", i, "name"], msg: `"${column.name}" is named twice`, type: "value_error" });
    seen.add(column.name);
    if (!(COLUMN_TYPES as readonly string[]).includes(column.type)) items.push({ loc: ["columns", i, "type"], msg: `"${column.type}" is not one of ${COLUMN_TYPES.join(", ")}`, type: "value_error" });
    if (!Number.isInteger(column.from) || column.from < 0 || column.from >= sourceColumns) items.push({ loc: ["columns", i, "from"], msg: `the file has columns 0 to ${sourceColumns - 1}`, type: "value_error" });
  });
  if (request.columns.length === 0) items.push({ loc: ["columns"], msg: "a load needs at least one column", type: "value_error" });
  for (const [i, key] of (request.keyColumns ?? []).entries()) {
    if (!seen.has(key)) items.push({ loc: ["keyColumns", i], msg: `"${key}" is not one of the loaded columns`, type: "value_error" });
  }
  if (request.mode === "upsert" && request.keyColumns?.length === 0) items.push({ loc: ["keyColumns"], msg: "an upsert needs key columns", type: "value_error" });
  const location = request.locationColumn;
  if (location) {
    const column = request.columns.find((c) => c.name === location.name);
    if (!column) items.push({ loc: ["locationColumn", "name"], msg: `"${location.name}" is not one of the loaded columns`, type: "value_error" });
    else if (column.type !== "text") items.push({ loc: ["locationColumn", "name"], msg: `a location column holds location ids or codes as text; "${location.name}" is ${column.type}`, type: "value_error" });
  }
  if (items.length > 0) throw new Invalid(items);
}

const sameShape = (a: TableShape, b: TableShape): boolean =>
  JSON.stringify([a.columns, a.keyColumns, a.location]) === JSON.stringify([b.columns, b.keyColumns, b.location]);

/** What the load does to the table: its shape after, and the DDL to get there. */
function planLoad(request: LoadRequest, existing: TableEntry | null): LoadPlan {
  const requested = request.columns.map(({ name, type }) => ({ name, type }));
  if (request.mode === "create" || request.mode === "replace") {
    // A replace keeps the table's key and location column unless it names others: a new file never drops a location policy by omission.
    const shape: TableShape = {
      columns: requested,
      keyColumns: request.keyColumns ?? existing?.keyColumns.filter((k) => requested.some((c) => c.name === k)) ?? [],
      location: request.locationColumn ?? existing?.location ?? null,
    };
    if (shape.location && !requested.some((c) => c.name === shape.location?.name)) {
      throw new Invalid([{ loc: ["locationColumn"], msg: `the table's location column "${shape.location.name}" is not among the loaded columns; load it, or name another`, type: "value_error" }]);
    }
    if (existing && existing.keyColumns.length > 0 && shape.keyColumns.length !== existing.keyColumns.length && !request.keyColumns) {
      throw new Invalid([{ loc: ["keyColumns"], msg: `the table's key (${existing.keyColumns.join(", ")}) is not among the loaded columns; load it, or name another key`, type: "value_error" }]);
    }
    return { shape, create: !existing, rebuild: existing !== null && !sameShape(shape, existing), added: [], newKey: false };
  }
  const table = existing!;
  const items: ValidationItem[] = [];
  const added: TableColumn[] = [];
  request.columns.forEach((column, i) => {
    const current = table.columns.find((c) => c.name === column.name);
    if (!current) {
      if (request.addNewColumns) added.push({ name: column.name, type: column.type });
      else items.push({ loc: ["columns", i, "name"], msg: `the table has no column "${column.name}"; ask to add new columns, or leave it out`, type: "value_error" });
    } else if (current.type !== column.type) {
      items.push({ loc: ["columns", i, "type"], msg: `"${column.name}" is ${current.type} in the table; changing a column's type reloads the table (mode replace)`, type: "value_error" });
    }
  });
  if (request.locationColumn && JSON.stringify(request.locationColumn) !== JSON.stringify(table.location)) {
    items.push({ loc: ["locationColumn"], msg: "the location column is set when a table is created or replaced", type: "value_error" });
  }
  let keyColumns = table.keyColumns;
  let newKey = false;
  if (request.mode === "upsert") {
    const asked = request.keyColumns ?? table.keyColumns;
    if (asked.length === 0) items.push({ loc: ["keyColumns"], msg: "an upsert needs key columns", type: "value_error" });
    else if (table.keyColumns.length > 0 && asked.join() !== table.keyColumns.join()) {
      items.push({ loc: ["keyColumns"], msg: `the table's key is (${table.keyColumns.join(", ")}); replace the table to change it`, type: "value_error" });
    } else if (table.keyColumns.length === 0) {
      keyColumns = asked;
      newKey = true;
    }
    for (const [i, key] of asked.entries()) {
      if (!request.columns.some((c) => c.name === key)) items.push({ loc: ["keyColumns", i], msg: `the key column "${key}" is not among the loaded columns`, type: "value_error" });
    }
  }
  if (table.location && !request.columns.some((c) => c.name === table.location?.name)) {
    items.push({ loc: ["columns"], msg: `the table's location column "${table.location.name}" must be loaded (a row without it would be seen by no location-limited manager)`, type: "value_error" });
  }
  if (items.length > 0) throw new Invalid(items);
  return { shape: { columns: [...table.columns, ...added], keyColumns, location: table.location }, create: false, rebuild: false, added, newKey };
}

/** Streams the source into the session's staging table (owner phase), checking every value; returns the last row's ordinal. */
async function stage(
  tx: BulkTx,
  request: LoadRequest,
  source: RowSource,
  options: { maxRows: number; report: LoadReport; onProgress?: (rows: number, bytes: number) => void },
): Promise<number> {
  if (!tx.copyBinary) throw new Error("this engine's connection cannot COPY");
  const { report } = options;
  const columns = request.columns;
  const keys = new Set(request.mode === "upsert" ? (request.keyColumns ?? []) : []);
  const definitions = columns.map((_, i) => `v${i} text`).join(", ");
  await tx.exec(`CREATE TEMP TABLE ${STAGING} (ord bigint, ${definitions}) ON COMMIT DROP`);
  await tx.exec(`GRANT SELECT ON ${STAGING} TO quarry_app`);
  const target = `${STAGING} (ord, ${columns.map((_, i) => `v${i}`).join(", ")})`;
  // Two writers: one chunk is encoded while the database ingests the one before, and never more than that one is in
  // flight (a chunk waits for its predecessor), so the process holds two chunks at most however fast the file reads.
  const writers = [new TextCopyWriter(columns.length), new TextCopyWriter(columns.length)];
  let writer = writers[0];
  let inFlight: Promise<void> = Promise.resolve();
  let row = 0;
  let bytes = 0;
  const flush = async () => {
    if (writer.rows === 0) return;
    await inFlight;
    bytes += writer.bytes;
    const progress = [report.rowsLoaded, bytes] as const;
    inFlight = tx.copyBinary!(target, writer.finish()).then(() => options.onProgress?.(...progress));
    // Its failure is met by the next `await inFlight`; until then it must not count as unhandled.
    inFlight.catch(() => undefined);
    // The other writer's chunk was sent and is done (awaited above): its buffer may be written again.
    writer = writer === writers[0] ? writers[1] : writers[0];
  };
  // One row's canonical values, reused row after row (the writer copies them out).
  const canonical: (string | null)[] = new Array<string | null>(columns.length);
  try {
    for await (const values of source.rows) {
      row++;
      const bad = canonicalRow(row, columns, values, keys, canonical);
      if (bad) {
        if (request.onBadRow === "fail") throw new BadValue(bad);
        report.rowsSkipped++;
        if (report.badRows.length < BAD_ROWS_REPORTED) report.badRows.push(bad);
        continue;
      }
      if (report.rowsLoaded >= options.maxRows) {
        throw new TooLarge(`Row ${row}: the load passes the organization's row limit (QUARRY_DATA_MAX_ROWS=${config().data.maxRows}); nothing was loaded`);
      }
      writer.add(row, canonical);
      report.rowsLoaded++;
      if (writer.bytes >= COPY_CHUNK_BYTES) await flush();
    }
    await flush();
  } finally {
    // The transaction rolls back on an error: not before the COPY in flight has ended (one statement at a time).
    await inFlight.catch(() => undefined);
  }
  await inFlight;
  // The move reads the staged rows by ordinal ranges (bounded statements): an index and the planner's figures for it.
  await tx.exec(`CREATE INDEX ON ${STAGING} (ord)`);
  await tx.exec(`ANALYZE ${STAGING}`);
  return row;
}

/**
 * Parses each value of the row once into `into` (its canonical text, or null for an empty value); the first value
 * that does not fit its column is returned as a BadRow (an empty key value of an upsert too), else null.
 */
function canonicalRow(row: number, columns: readonly LoadColumn[], values: readonly (string | null)[], keys: ReadonlySet<string>, into: (string | null)[]): BadRow | null {
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i];
    const text = values[column.from] ?? null;
    const parsed = text === null ? undefined : tryParseCell(column.type, text);
    if (text === null || (parsed === undefined && column.type !== "text" && text.trim() === "")) {
      if (keys.has(column.name)) return { row, column: column.name, value: text, message: "a key column's value is empty" };
      into[i] = null;
      continue;
    }
    if (parsed === undefined) {
      const shown = text.length > 100 ? `${text.slice(0, 100)}…` : text;
      return { row, column: column.name, value: shown, message: `${JSON.stringify(shown)} is not a valid ${column.type}` };
    }
    into[i] = parsed;
  }
  return null;
}

/**
 * The organization of the rows: an InitPlan, evaluated once per statement. Called bare in a select list it runs per
 * row, and each call verifies the tenant settings' signature (migration 0017): most of a move's time.
 */
const ORGANIZATION = "(SELECT quarry_current_org())";

/**
 * Moves the staged rows into the table as quarry_app (the policies check each row), MOVE_BATCH_ROWS staged rows
 * (by ordinal) a statement: each statement's work is bounded, so none nears the embedded engine's statement limit
 * however large the file, and all of them are still one transaction (docs/data.md "Loads").
 */
async function move(tx: BulkTx, orgId: string, request: LoadRequest, plan: LoadPlan, lastOrdinal: number): Promise<void> {
  const table = qualifiedTable(orgId, request.table);
  const names = request.columns.map((c) => quoteIdent(c.name)).join(", ");
  const values = request.columns.map((c, i) => (c.type === "text" ? `v${i}` : `v${i}::${SQL_TYPES[c.type]}`)).join(", ");
  const batch = "ord > $1 AND ord <= $2";
  let statement: string;
  if (request.mode !== "upsert") {
    statement = `INSERT INTO ${table} (org_id, ${names}) SELECT ${ORGANIZATION}, ${values} FROM ${STAGING} WHERE ${batch} ORDER BY ord`;
  } else {
    // A key given twice in one file: its last row wins, as if the rows were upserted one by one (within a batch by
    // DISTINCT ON, across batches because a later batch updates what an earlier one wrote).
    const keyIndexes = plan.shape.keyColumns.map((key) => `v${request.columns.findIndex((c) => c.name === key)}`);
    const updates = request.columns.filter((c) => !plan.shape.keyColumns.includes(c.name)).map((c) => `${quoteIdent(c.name)} = EXCLUDED.${quoteIdent(c.name)}`);
    statement = `INSERT INTO ${table} (org_id, ${names})
     SELECT ${ORGANIZATION}, ${values} FROM (SELECT DISTINCT ON (${keyIndexes.join(", ")}) * FROM ${STAGING} WHERE ${batch} ORDER BY ${keyIndexes.join(", ")}, ord DESC) s
     ON CONFLICT (org_id, ${plan.shape.keyColumns.map(quoteIdent).join(", ")}) DO ${updates.length > 0 ? `UPDATE SET ${updates.join(", ")}` : "NOTHING"}`;
  }
  if (request.mode === "replace" && !plan.rebuild) await tx.exec(`DELETE FROM ${table}`);
  for (let from = 0; from < lastOrdinal; from += MOVE_BATCH_ROWS) {
    await tx.exec(statement, [from, Math.min(from + MOVE_BATCH_ROWS, lastOrdinal)]);
  }
}

/** Who the load history names: the user or API key id, or the job. */
const actorName = (actor: AuditActor | undefined): string | null => (actor === undefined ? null : "system" in actor ? actor.system : actor.userId);

/** The history keeps a failed load too (its transaction rolled back, so in a transaction of its own). */
async function recordFailure(scope: TenantScope, loadId: string, request: LoadRequest, error: unknown): Promise<void> {
  try {
    await withTenant(scope, (tx) =>
      tx.$executeRawUnsafe(
        `INSERT INTO org_table_loads (org_id, id, table_name, mode, state, error, actor, finished_at) VALUES (quarry_current_org(), $1, $2, $3, 'failed', $4, $5, now())`,
        loadId,
        request.table,
        request.mode,
        (error as Error)?.message?.slice(0, 2_000) ?? String(error),
        actorName(request.actor),
      ),
    );
  } catch (recordError) {
    log.warn("a failed load could not be recorded", { loadId, error: (recordError as Error).message });
  }
}
