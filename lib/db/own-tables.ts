import "server-only";
import { AsyncLocalStorage } from "node:async_hooks";
import { createHash } from "node:crypto";
import { withTenant } from "./tenant";
import { orgReaderTable } from "./warehouse";
import { processSingleton } from "@/lib/process-singleton";
import { sharedDatasetTexts, withSharedDatasetTexts } from "./shared-datasets";

/*
 * An organization's own tables as the SQL allow-list resolves them (lib/query/sql-allow-list.ts
 * `ownTables`): name -> columns, read from its catalog. Cached briefly per process: a statement that
 * names a table dropped a moment ago then fails on the database (relation does not exist); loads and
 * drops in this process forget the cache at once, so a table is usable as soon as its load returns.
 */

export interface OwnReaderTables {
  /** Differs whenever the catalog's names or columns do (with the organization): keys the allow-list's memo. */
  stamp: string;
  columns: ReadonlyMap<string, readonly string[]>;
  /** Tables with a location column, and what it holds (a location's id or code): the rollup scope rule reads it. */
  locations: ReadonlyMap<string, { column: string; by: "id" | "code" }>;
}

const FRESH_MS = 2_000;

const cache = processSingleton("ownReaderTables", () => new Map<string, { at: number; value: Promise<OwnReaderTables> }>());

export function ownReaderTables(orgId: string): Promise<OwnReaderTables> {
  const entries = cache.get();
  const hit = entries.get(orgId);
  if (hit && Date.now() - hit.at < FRESH_MS) return hit.value;
  const value = read(orgId);
  entries.set(orgId, { at: Date.now(), value });
  value.catch(() => entries.delete(orgId));
  return value;
}

/** After a load or a drop: the next statement reads the catalog again. */
export function forgetOwnReaderTables(orgId: string): void {
  cache.get().delete(orgId);
}

async function read(orgId: string): Promise<OwnReaderTables> {
  const rows = await withTenant({ orgId }, (tx) =>
    tx.$queryRawUnsafe<{ name: string; columns: { name: string }[]; location_column: string | null; location_by: "id" | "code" | null }[]>(
      "SELECT name, columns, location_column, location_by FROM org_tables ORDER BY name",
    ),
  );
  const columns = new Map(rows.map((row) => [row.name, orgReaderTable(row.columns.map((c) => c.name)).columns]));
  const locations = new Map(rows.flatMap((row) => (row.location_column && row.location_by ? [[row.name, { column: row.location_column, by: row.location_by }] as const] : [])));
  const stamp = `${orgId}:${createHash("sha256").update(JSON.stringify([[...columns], [...locations]])).digest("base64url").slice(0, 16)}`;
  return { stamp, columns, locations };
}

/*
 * The organization's own tables for the manifest check (lib/dashboards/manifest.ts), which is
 * synchronous and called from many places: the work that serves one organization (a request of the
 * API, a dashboard page, an embed or public view) runs inside withOwnTables, and the check reads
 * them from here. Outside such work a manifest may name the warehouse alone.
 */
const ambient = new AsyncLocalStorage<OwnReaderTables>();

export async function withOwnTables<T>(orgId: string | null | undefined, work: () => Promise<T>): Promise<T> {
  if (!orgId) return work();
  // The organization's shared datasets travel with its tables: the same parse resolves `{ ref }` datasets (issue 48).
  const [tables, datasets] = await Promise.all([ownReaderTables(orgId), sharedDatasetTexts(orgId)]);
  return ambient.run(tables, () => withSharedDatasetTexts(datasets, work));
}

/** The own tables of the organization whose work this is, if any. */
export const currentOwnTables = (): OwnReaderTables | undefined => ambient.getStore();
