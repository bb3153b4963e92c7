import "server-only";
import { pipeline } from "node:stream/promises";
import { Readable } from "node:stream";
import type { PGlite, Transaction } from "@electric-sql/pglite";
import type pg from "pg";
import { from as copyFromStream } from "pg-copy-streams";
import { getDb, type Database } from "./client";
import type { TenantScope } from "./tenant";

/**
 * A tenant transaction on a raw connection, for bulk writes Prisma cannot send (COPY). COPY is
 * refused on tables with row-level security, and PGlite's COPY reads a server-side file
 * (/dev/blob), which only its owner role may. So a bulk write happens in two phases of one
 * transaction: `stage` runs as the connection's own role and may only load temporary tables
 * (COPY); then the tenant context is set exactly as withTenant sets it (settings, then
 * `SET LOCAL ROLE quarry_app`) and `work` moves the rows with statements the policies check.
 */
export interface BulkTx {
  exec(sql: string, params?: unknown[]): Promise<number>;
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
  /**
   * Runs `COPY <target> FROM STDIN WITH (FORMAT binary)` with `data` as its input; undefined where the
   * connection cannot COPY (PGlite behind pglite-socket: COPY FROM STDIN loses protocol
   * synchronisation there, checked with pglite-socket 0.1.6), so callers fall back to INSERT.
   */
  copyBinary?: (target: string, data: Uint8Array) => Promise<void>;
}

export async function withTenantBulk<T>(scope: TenantScope, stage: (tx: BulkTx) => Promise<void>, work: (tx: BulkTx) => Promise<T>): Promise<T> {
  if (!scope.orgId) throw new Error("withTenantBulk needs an organization id");
  const db = await getDb();
  const result = await withRawTransaction(db, async (tx) => {
    await stage(tx);
    const locations = scope.locationIds && scope.locationIds.length > 0 ? scope.locationIds.join(",") : "";
    await tx.query("SELECT set_config('app.org_id', $1, true), set_config('app.location_ids', $2, true)", [scope.orgId, locations]);
    await tx.exec("SET LOCAL ROLE quarry_app");
    return work(tx);
  });
  // As in withTenant: let the event loop serve other requests between bulk steps on PGlite.
  await new Promise((resolve) => setImmediate(resolve));
  return result;
}

/** One transaction on a raw connection of either engine (owner context until the caller changes it). */
export async function withRawTransaction<T>(db: Database, work: (tx: BulkTx) => Promise<T>): Promise<T> {
  if (db.pglite) return pgliteTransaction(db.pglite, work);
  if (db.pool) return poolTransaction(db.pool, db.kind === "postgres", work);
  throw new Error("this database offers no raw connection for bulk writes");
}

async function poolTransaction<T>(pool: pg.Pool, canCopy: boolean, work: (tx: BulkTx) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  const tx: BulkTx = {
    exec: async (sql, params) => (await client.query(sql, params)).rowCount ?? 0,
    query: async <R,>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as R[],
    copyBinary: canCopy
      ? async (target, data) => {
          const input = Readable.from([Buffer.from(data.buffer, data.byteOffset, data.byteLength)]);
          await pipeline(input, client.query(copyFromStream(`COPY ${target} FROM STDIN WITH (FORMAT binary)`)));
        }
      : undefined,
  };
  try {
    await client.query("BEGIN");
    const result = await work(tx);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

async function pgliteTransaction<T>(pglite: PGlite, work: (tx: BulkTx) => Promise<T>): Promise<T> {
  return pglite.transaction(async (t: Transaction) => {
    const tx: BulkTx = {
      // Without parameters: the simple protocol, which also takes several statements (as pg's does).
      exec: async (sql, params) =>
        params ? ((await t.query(sql, params)).affectedRows ?? 0) : (await t.exec(sql)).reduce((n, r) => n + (r.affectedRows ?? 0), 0),
      query: async <R,>(sql: string, params?: unknown[]) => (await t.query<R>(sql, params)).rows,
      copyBinary: async (target, data) => {
        // PGlite reads COPY input from the virtual file /dev/blob.
        await t.query(`COPY ${target} FROM '/dev/blob' WITH (FORMAT binary)`, [], { blob: new Blob([data as Uint8Array<ArrayBuffer>]) });
      },
    };
    return work(tx);
  });
}
