import "server-only";
import { withTenantBulk } from "@/lib/db/bulk";
import { type TenantScope, type TenantTx, withTenant } from "@/lib/db/tenant";
import { Conflict, NotFound } from "@/lib/errors";
import type { ColumnType } from "./formats/infer";
import { forgetOwnReaderTables } from "@/lib/db/own-tables";
import { dropTable, lockTable, type TableColumn, type TableShape } from "./storage";
import { type AuditActor, auditStatement } from "@/lib/audit/record";

/*
 * The catalog of an organization's own tables (org_tables, migration 0043): what each table is, how
 * big, when it was last loaded, and who reads it. Read and written only in tenant transactions.
 */

export interface TableEntry extends TableShape {
  name: string;
  rowCount: number;
  bytes: number;
  lastLoadAt: Date | null;
  createdAt: Date;
}

/** A statement in a tenant transaction: Prisma's (withTenant) or a bulk transaction's after it entered the tenant. */
export type TenantQuery = <T>(sql: string, params: unknown[]) => Promise<T[]>;

export const prismaQuery = (tx: TenantTx): TenantQuery => (sql, params) => tx.$queryRawUnsafe(sql, ...params);

/** A dashboard, embed or alert rule that reads a table (what a drop would break). */
export interface TableReader {
  kind: "dashboard" | "embed" | "alert_rule";
  id: string;
  name: string;
}

interface EntryRow {
  name: string;
  columns: TableColumn[];
  key_columns: string[];
  location_column: string | null;
  location_by: "id" | "code" | null;
  row_count: bigint | number;
  bytes: bigint | number;
  last_load_at: Date | null;
  created_at: Date;
}

const ENTRY_COLUMNS = "name, columns, key_columns, location_column, location_by, row_count, bytes, last_load_at, created_at";

const toEntry = (row: EntryRow): TableEntry => ({
  name: row.name,
  columns: row.columns.map((c) => ({ name: c.name, type: c.type as ColumnType })),
  keyColumns: row.key_columns,
  location: row.location_column && row.location_by ? { name: row.location_column, by: row.location_by } : null,
  rowCount: Number(row.row_count),
  bytes: Number(row.bytes),
  lastLoadAt: row.last_load_at,
  createdAt: row.created_at,
});

/** The organization's tables, by name. */
export async function listTableEntries(tx: TenantTx): Promise<TableEntry[]> {
  const rows = await tx.$queryRawUnsafe<EntryRow[]>(`SELECT ${ENTRY_COLUMNS} FROM org_tables ORDER BY name`);
  return rows.map(toEntry);
}

export async function findTableEntry(tx: TenantTx, name: string): Promise<TableEntry | null> {
  const [row] = await tx.$queryRawUnsafe<EntryRow[]>(`SELECT ${ENTRY_COLUMNS} FROM org_tables WHERE name = $1`, name);
  return row ? toEntry(row) : null;
}

/** What the organization holds in all its tables (the limits of lib/config's `data` count it). */
export async function organizationUsage(tx: TenantTx): Promise<{ tables: number; rows: number; bytes: number }> {
  const [row] = await tx.$queryRawUnsafe<{ tables: number; rows: string; bytes: string }[]>(
    "SELECT count(*)::int AS tables, coalesce(sum(row_count), 0)::text AS rows, coalesce(sum(bytes), 0)::text AS bytes FROM org_tables",
  );
  return { tables: row.tables, rows: Number(row.rows), bytes: Number(row.bytes) };
}

/**
 * Who reads the table: published dashboards whose manifest names it, their live embeds, and the alert
 * rules on their widgets.
 * A manifest names a table in a dataset's `from` or in SQL text; a word match of the name over the
 * published manifest finds both (and may list a dashboard that only mentions the word: a refused drop
 * can be forced, a missed reader could not be undone).
 */
export async function tableReaders(query: TenantQuery, name: string): Promise<TableReader[]> {
  const pattern = `\\m${name}\\M`;
  const dashboards = await query<{ id: string; name: string; embeds: { id: string }[] }>(
    `SELECT d.id, d.name,
            coalesce((SELECT json_agg(json_build_object('id', e.id)) FROM dashboard_embeds e WHERE e.dashboard_id = d.id AND e.revoked_at IS NULL), '[]') AS embeds
       FROM dashboards d JOIN dashboard_versions v ON v.dashboard_id = d.id AND v.version = d.published_version
      WHERE v.spec_yaml ~ $1 ORDER BY d.name`,
    [pattern],
  );
  // An alert rule evaluates a widget of its dashboard's published version (lib/alerts).
  const alerts = dashboards.length === 0 ? [] : await query<{ id: string; name: string }>("SELECT id, name FROM widget_alerts WHERE dashboard_id = ANY($1) ORDER BY name", [dashboards.map((d) => d.id)]);
  const readers: TableReader[] = [];
  for (const dashboard of dashboards) {
    readers.push({ kind: "dashboard", id: dashboard.id, name: dashboard.name });
    for (const embed of dashboard.embeds) readers.push({ kind: "embed", id: embed.id, name: dashboard.name });
  }
  for (const alert of alerts) readers.push({ kind: "alert_rule", id: alert.id, name: alert.name });
  return readers;
}

/** The catalog with each table's readers (the /data page and GET /api/v1/data/tables). */
export async function listTables(scope: TenantScope): Promise<(TableEntry & { readers: TableReader[] })[]> {
  return withTenant(scope, async (tx) => {
    const entries = await listTableEntries(tx);
    return Promise.all(entries.map(async (entry) => ({ ...entry, readers: await tableReaders(prismaQuery(tx), entry.name) })));
  });
}

export async function getTable(scope: TenantScope, name: string): Promise<TableEntry & { readers: TableReader[] }> {
  const found = await withTenant(scope, async (tx) => {
    const entry = await findTableEntry(tx, name);
    return entry ? { ...entry, readers: await tableReaders(prismaQuery(tx), name) } : null;
  });
  if (!found) throw new NotFound(`Table "${name}" not found`);
  return found;
}

/** A drop refused because something reads the table (409, listing them). */
export class TableInUse extends Conflict {
  constructor(
    readonly table: string,
    readonly readers: TableReader[],
  ) {
    super(`Table "${table}" is read by ${readers.map((r) => `${r.kind.replace("_", " ")} "${r.name}" (${r.id})`).join(", ")}; drop it with force to drop it anyway`);
  }
}

/**
 * Drops a table and its catalog entry in one transaction; refused while a published dashboard, an
 * embed or an alert rule reads it, unless `force`. The warehouse version moves (a drop fires no
 * trigger), so cached results over the table go stale at once. With `actor`, the audit log records
 * the drop in the same transaction.
 */
export async function deleteTable(scope: TenantScope, name: string, options: { force?: boolean; actor?: AuditActor } = {}): Promise<void> {
  let found = false;
  await withTenantBulk(
    scope,
    (tx) => lockTable(tx, scope.orgId, name),
    async (tx) => {
      const [entry] = await tx.query<EntryRow>(`SELECT ${ENTRY_COLUMNS} FROM org_tables WHERE name = $1 FOR UPDATE`, [name]);
      if (!entry) return;
      found = true;
      if (!options.force) {
        const readers = await tableReaders((sql, params) => tx.query(sql, params), name);
        if (readers.length > 0) throw new TableInUse(name, readers);
      }
      await tx.exec("DELETE FROM org_tables WHERE name = $1", [name]);
      await tx.exec(BUMP_WAREHOUSE_VERSION);
      if (options.actor) {
        const audit = auditStatement({ actor: options.actor, action: "data_table.delete", target: { id: name, name }, before: { ...toEntry(entry), forced: options.force === true } });
        await tx.exec(audit.sql, audit.params);
      }
      // Back to the owner for the DDL, in the same transaction: the catalog row and the table go together.
      await tx.exec("RESET ROLE");
      await dropTable(tx, scope.orgId, name);
    },
  );
  if (!found) throw new NotFound(`Table "${name}" not found`);
  forgetOwnReaderTables(scope.orgId);
}

/** Moves the organization's warehouse version, as migration 0036's triggers do on a write. */
export const BUMP_WAREHOUSE_VERSION = `INSERT INTO warehouse_versions AS w (org_id, version, changed_at) VALUES (quarry_current_org(), 1, now())
  ON CONFLICT (org_id) DO UPDATE SET version = w.version + 1, changed_at = now()`;
