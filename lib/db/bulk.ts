import "server-only";
import { createHash } from "node:crypto";
import { pipeline } from "node:stream/promises";
import { Readable } from "node:stream";
import { from as copyFromStream } from "pg-copy-streams";
import type pg from "pg";
import { Unavailable } from "@/lib/errors";
import { getDb, type Database } from "./client";
import type { TenantScope } from "./tenant";

/**
 * A tenant transaction on a raw connection, for bulk writes Prisma cannot send (COPY). COPY is
 * refused on tables with row-level security, and PGlite's COPY reads a server-side file
 * (/dev/blob), which only its owner role may. So a bulk write happens in two phases of one
 * transaction: `stage` runs as the connection's own role and may only load temporary tables
 * (COPY); then the tenant context is set exactly as withTenant sets it (signed settings, then
 * `SET LOCAL ROLE quarry_app`) and `work` moves the rows with statements the policies check.
 */
export interface BulkTx {
  exec(sql: string, params?: unknown[]): Promise<number>;
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
  /**
   * As `query`, as a prepared statement of this connection named by its text: PostgreSQL parses it
   * once per connection and, once its plan proves general, plans it no more. Each text stays
   * prepared for the connection's life, so only for statements of a small, fixed set of texts.
   */
  queryPrepared<T>(sql: string, params: unknown[]): Promise<T[]>;
  /**
   * Runs `COPY <target> FROM STDIN WITH (FORMAT binary)` with `data` as its input (both engines;
   * optional for callers that fall back to INSERT).
   */
  copyBinary?: (target: string, data: Uint8Array) => Promise<void>;
  /**
   * The same object for every transaction on one database session (connection): set-up a session
   * keeps, such as a temporary table, need be done once per session (after its transaction commits).
   */
  session: object;
}

export async function withTenantBulk<T>(
  scope: TenantScope,
  stage: (tx: BulkTx) => Promise<void>,
  work: (tx: BulkTx) => Promise<T>,
  options: { connectionWaitMs?: number } = {},
): Promise<T> {
  if (!scope.orgId) throw new Error("withTenantBulk needs an organization id");
  const db = await getDb();
  const result = await withRawTransaction(db, async (tx) => {
    await stage(tx);
    const locations = scope.locationIds && scope.locationIds.length > 0 ? scope.locationIds.join(",") : "";
    await tx.query("SELECT quarry_enter_tenant($1, $2, 'quarry_app', NULL, NULL)::text AS entered", [scope.orgId, locations]);
    await tx.exec("SET LOCAL ROLE quarry_app");
    return work(tx);
  }, options);
  // As in withTenant: let the event loop serve other requests between bulk steps on PGlite.
  await new Promise((resolve) => setImmediate(resolve));
  return result;
}

/** How soon a caller turned away for want of a connection should try again (as withTenant's). */
const BUSY_RETRY_AFTER_SECONDS = 5;

/**
 * A connection of the pool, or Unavailable (503 with Retry-After) when none frees up within
 * `waitMs`: the pool itself would wait for ever (node-postgres' default), and a search must not
 * hang while every connection is busy. One that arrives after the deadline goes straight back.
 */
async function connectWithin(pool: pg.Pool, waitMs: number): Promise<pg.PoolClient> {
  let timer: NodeJS.Timeout | undefined;
  const connecting = pool.connect();
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Unavailable("The database is busy; retry shortly", BUSY_RETRY_AFTER_SECONDS)), waitMs);
  });
  try {
    return await Promise.race([connecting, deadline]);
  } catch (error) {
    if (error instanceof Unavailable) connecting.then((late) => late.release(), () => undefined);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** One transaction on a raw connection of either engine (owner context until the caller changes it); Unavailable past `connectionWaitMs` (30 s) without one. */
export async function withRawTransaction<T>(db: Database, work: (tx: BulkTx) => Promise<T>, options: { connectionWaitMs?: number } = {}): Promise<T> {
  const engine = db.engine;
  const client = await connectWithin(db.pool, options.connectionWaitMs ?? 30_000);
  // A session ended while it is checked out (pg_terminate_backend, a server restart) is an 'error'
  // event the pool no longer listens for; unheard it would end the process. The transaction fails on
  // its next statement, and the connection is discarded rather than pooled again.
  let lost: Error | undefined;
  const onLost = (error: Error) => {
    lost = error;
  };
  client.on("error", onLost);
  const tx: BulkTx = {
    session: client,
    exec: async (sql, params) => (await client.query(sql, params)).rowCount ?? 0,
    query: async <R,>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as R[],
    queryPrepared: async <R,>(sql: string, params: unknown[]) => (await client.query({ name: preparedStatementName(sql), text: sql, values: params })).rows as R[],
    copyBinary: async (target, data) => {
      const sql = `COPY ${target} FROM STDIN WITH (FORMAT binary)`;
      // The embedded engine takes COPY input over IPC, in this connection's session (see copyInSession).
      if (engine) return engine.copyInSession(sql, data);
      const input = Readable.from([Buffer.from(data.buffer, data.byteOffset, data.byteLength)]);
      await pipeline(input, client.query(copyFromStream(sql)));
    },
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
    client.removeListener("error", onLost);
    client.release(lost);
  }
}

/** A name per statement text (node-postgres refuses one name for two texts). */
function preparedStatementName(sql: string): string {
  return `quarry_${createHash("sha256").update(sql).digest("base64url").slice(0, 32)}`;
}
