import "server-only";
import type { BulkTx } from "@/lib/db/bulk";
import { orgReaderRole, orgTableSchema } from "@/lib/db/org-schema";
import { ensureOrgReaderRole } from "@/lib/db/reader-login";
import type { ColumnType } from "./formats/infer";

/*
 * Where an organization's tables physically live (docs/data.md "Storage"): the organization's own
 * schema (orgTableSchema), each table with `org_id` and forced row-level security like the warehouse,
 * a location policy when it declares a location column, the warehouse's change triggers (migration
 * 0036: a load moves the organization's warehouse version, so cached results and rollups go stale; and
 * 0048's, which tell the embedded analytics copies),
 * and SELECT for the organization's own reader role alone (orgReaderRole, migration 0048).
 * Every statement here is DDL the application's login runs (it owns the tables), in the owner phase
 * of a bulk transaction (lib/db/bulk.ts); rows are written afterwards as quarry_app under the policies.
 */

/** The PostgreSQL type each column type is stored as. */
export const SQL_TYPES: Readonly<Record<ColumnType, string>> = {
  text: "text",
  integer: "bigint",
  numeric: "numeric",
  boolean: "boolean",
  date: "date",
  timestamptz: "timestamptz",
};

export const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;

export interface TableColumn {
  name: string;
  type: ColumnType;
}

export interface LocationColumn {
  name: string;
  /** What the column holds: a location's id or its code. */
  by: "id" | "code";
}

/** What a table is: its columns in order, the upsert key, its location column. */
export interface TableShape {
  columns: TableColumn[];
  keyColumns: string[];
  location: LocationColumn | null;
}

/** The table's name as SQL names it: its organization's schema, then its own name. */
export const qualifiedTable = (orgId: string, name: string): string => `${quoteIdent(orgTableSchema(orgId))}.${quoteIdent(name)}`;

/**
 * Serializes the loads and drops of one table (until the transaction ends): two loads of one table
 * at once would each plan against a shape the other is changing.
 */
export async function lockTable(tx: BulkTx, orgId: string, name: string): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 42))::text AS locked", [`${orgTableSchema(orgId)}.${name}`]);
}

/** The table's columns as the database has them (owner context), or null when it does not exist. */
export async function physicalColumns(tx: BulkTx, orgId: string, name: string): Promise<string[] | null> {
  const rows = await tx.query<{ name: string | null }>(
    `SELECT a.attname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind = 'r' ORDER BY a.attnum`,
    [orgTableSchema(orgId), name],
  );
  return rows.length === 0 ? null : rows.flatMap((row) => (row.name === null || row.name === "org_id" ? [] : [row.name]));
}

/** Creates the table (its schema first, when this is the organization's first), with its policies, grants and triggers. */
export async function createTable(tx: BulkTx, orgId: string, name: string, shape: TableShape): Promise<void> {
  const schema = quoteIdent(orgTableSchema(orgId));
  const table = qualifiedTable(orgId, name);
  // Read by the organization's reader role alone (withTenant's reader work enters it): another
  // organization's statement cannot even name the schema (docs/data.md "Tenancy").
  const reader = orgReaderRole(orgId);
  await ensureOrgReaderRole(tx, reader);
  await tx.exec(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  await tx.exec(`GRANT USAGE ON SCHEMA ${schema} TO quarry_app, ${reader}`);
  const columns = shape.columns.map((c) => `${quoteIdent(c.name)} ${SQL_TYPES[c.type]}`);
  await tx.exec(`CREATE TABLE ${table} (org_id text NOT NULL, ${columns.join(", ")})`);
  await tx.exec(`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`);
  await tx.exec(`ALTER TABLE ${table} FORCE ROW LEVEL SECURITY`);
  await tx.exec(`CREATE POLICY tenant_isolation ON ${table} USING (org_id = (SELECT quarry_current_org())) WITH CHECK (org_id = (SELECT quarry_current_org()))`);
  if (shape.location) await tx.exec(`CREATE POLICY location_scope ON ${table} AS RESTRICTIVE USING (${locationCondition(shape.location)})`);
  await tx.exec(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${table} TO quarry_app`);
  await tx.exec(`GRANT SELECT ON ${table} TO ${reader}`);
  for (const [trigger, event, rows] of [["warehouse_inserted", "INSERT", "NEW"], ["warehouse_updated", "UPDATE", "NEW"], ["warehouse_deleted", "DELETE", "OLD"]] as const) {
    await tx.exec(`CREATE TRIGGER ${trigger} AFTER ${event} ON ${table} REFERENCING ${rows} TABLE AS changed_rows FOR EACH STATEMENT EXECUTE FUNCTION public.quarry_warehouse_changed()`);
  }
  // As every table the reader reads: a write tells the embedded analytics copies (migration 0048).
  await tx.exec(`CREATE TRIGGER reader_tables_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION public.quarry_reader_tables_changed()`);
  if (shape.keyColumns.length > 0) await addKey(tx, orgId, name, shape.keyColumns);
}

/**
 * The location policy's condition, as the warehouse's (migration 0001, 0010): a caller limited to
 * some locations sees the rows whose location column holds one of them, by id or by code.
 */
function locationCondition(location: LocationColumn): string {
  const scope = "(SELECT quarry_location_scope())";
  const column = `${quoteIdent(location.name)}::text`;
  return location.by === "id"
    ? `${scope} IS NULL OR ${column} = ANY (${scope}::text[])`
    : `${scope} IS NULL OR ${column} IN (SELECT l.code FROM public.locations l WHERE l.id = ANY (${scope}::text[]))`;
}

/** The unique index an upsert matches on (org_id first, as every tenant key). */
export async function addKey(tx: BulkTx, orgId: string, name: string, keyColumns: readonly string[]): Promise<void> {
  await tx.exec(`CREATE UNIQUE INDEX ON ${qualifiedTable(orgId, name)} (org_id, ${keyColumns.map(quoteIdent).join(", ")})`);
}

export async function addColumns(tx: BulkTx, orgId: string, name: string, columns: readonly TableColumn[]): Promise<void> {
  if (columns.length === 0) return;
  await tx.exec(`ALTER TABLE ${qualifiedTable(orgId, name)} ${columns.map((c) => `ADD COLUMN ${quoteIdent(c.name)} ${SQL_TYPES[c.type]}`).join(", ")}`);
}

/** Drops the table (its policies, grants, triggers and index go with it). */
export async function dropTable(tx: BulkTx, orgId: string, name: string): Promise<void> {
  await tx.exec(`DROP TABLE IF EXISTS ${qualifiedTable(orgId, name)}`);
}
