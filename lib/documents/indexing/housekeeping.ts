import "server-only";
import { indexingSettings } from "@/lib/config/indexing";
import type { Database } from "@/lib/db/client";
import { log } from "@/lib/log";

/**
 * Embedded housekeeping (issue 28 §4, docs/search.md "Embedded housekeeping"). PGlite runs no autovacuum, so
 * every re-index (the swap deletes the previous generation's chunks), removed index and deleted document left
 * dead chunk rows, their TOAST and their HNSW and GIN entries in the data folder for good, and each batch's
 * progress update a dead `documents` row. The worker vacuums these tables by autovacuum's own rule instead.
 * Plain VACUUM, not FULL: it makes the space reusable (and pgvector repairs the graph around deleted elements)
 * without rewriting the table; REINDEX CONCURRENTLY needs a second session, which PGlite does not have.
 */
export const HOUSEKEPT_TABLES = ["document_chunks", "documents"] as const;

/** PostgreSQL's defaults, autovacuum_vacuum_threshold and autovacuum_vacuum_scale_factor: vacuum once dead rows pass 50 + 20 % of live ones. */
export const VACUUM_THRESHOLD_ROWS = 50;
export const VACUUM_SCALE_FACTOR = 0.2;

export interface VacuumReport {
  table: string;
  deadRows: number;
  liveRows: number;
  /** How long the VACUUM (or the checkpoint after them) held the engine: every other statement of the process waited this long at most. */
  ms: number;
}

/** Dead and live rows of each housekept table, as the statistics collector counts them. */
export async function deadRows(db: Pick<Database, "system">): Promise<{ table: string; dead: number; live: number }[]> {
  const rows = await db.system.query<{ relname: string; dead: string | number; live: string | number }>(
    "SELECT relname, n_dead_tup AS dead, n_live_tup AS live FROM pg_stat_user_tables WHERE schemaname = 'public' AND relname = ANY($1::text[]) ORDER BY relname",
    [HOUSEKEPT_TABLES],
  );
  return rows.map((r) => ({ table: r.relname, dead: Number(r.dead), live: Number(r.live) }));
}

/**
 * The embedded supervisor restarts the engine when a statement runs past its limit, 120 s unless the connection
 * set one (embedded-engine.md): a vacuum of a large chunk table must not be killed half-way (and retried every
 * check). Generous, since stopping it would only cost more.
 */
const EMBEDDED_VACUUM_LIMIT_MS = 30 * 60_000;

/** Vacuums (and analyses) each housekept table whose dead rows pass autovacuum's rule; `force` vacuums every one. */
export async function vacuumDueTables(db: Pick<Database, "system" | "kind" | "pool">, options: { force?: boolean } = {}): Promise<VacuumReport[]> {
  const due = (await deadRows(db)).filter(({ dead, live }) => options.force || dead > VACUUM_THRESHOLD_ROWS + VACUUM_SCALE_FACTOR * live);
  if (due.length === 0) return [];
  const reports: VacuumReport[] = [];
  // One connection held for the whole pass, so the longer limit set on it covers these statements and no others.
  const client = await db.pool.connect();
  try {
    if (db.kind === "pglite") await client.query(`SET statement_timeout = ${EMBEDDED_VACUUM_LIMIT_MS}`);
    for (const { table, dead, live } of due) {
      const started = performance.now();
      // The table name comes from HOUSEKEPT_TABLES, never from input.
      await client.query(`VACUUM (ANALYZE) ${table}`);
      reports.push({ table, deadRows: dead, liveRows: live, ms: Math.round(performance.now() - started) });
    }
    if (db.kind === "pglite") {
      // PGlite has no checkpointer process: without a checkpoint, WAL segments pile up to max_wal_size (1 GB) before
      // any is recycled. After one, at most min_wal_size (80 MB) is kept. A server's checkpointer does this itself.
      const started = performance.now();
      await client.query("CHECKPOINT");
      reports.push({ table: "(checkpoint)", deadRows: 0, liveRows: 0, ms: Math.round(performance.now() - started) });
    }
  } finally {
    // Back to the supervisor's default limit (0: none set) before the connection serves anyone else.
    if (db.kind === "pglite") await client.query("SET statement_timeout = 0").catch(() => undefined);
    client.release();
  }
  return reports;
}

/**
 * Starts the periodic check on the embedded engine (nothing on a PostgreSQL server, whose autovacuum does
 * this): every QUARRY_EMBEDDED_VACUUM_CHECK_MS, once the engine has been quiet for QUARRY_EMBEDDED_VACUUM_QUIET_MS,
 * vacuums the tables that are due. Answers a function that stops it.
 */
export function startEmbeddedHousekeeping(db: Database): () => void {
  const { vacuumCheckMs, vacuumQuietMs } = indexingSettings();
  const engine = db.engine;
  if (db.kind !== "pglite" || !engine || vacuumCheckMs === 0) return () => undefined;
  let running = false;
  const tick = async () => {
    // Busy (a burst of requests, an index run storing): try at the next check rather than queue in front of them.
    if (running || engine.state !== "ready" || performance.now() - engine.lastStatementAt < vacuumQuietMs) return;
    running = true;
    try {
      for (const report of await vacuumDueTables(db)) log.info("embedded housekeeping: vacuumed", { ...report });
    } catch (error) {
      log.warn("embedded housekeeping failed", { error: String(error) });
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), vacuumCheckMs);
  timer.unref?.();
  return () => clearInterval(timer);
}
