import "server-only";
import fs from "node:fs";
import path from "node:path";
import type { SqlRunner } from "./sql";

/**
 * Planner statistics on the embedded engine. PGlite runs no autovacuum daemon, so nothing else gathers them, and
 * without them the warehouse plans as if its tables were tiny (the sample dashboard's widest queries ran 4x slower).
 * A full ANALYZE costs seconds at every start (4-8 s under load, in every test file), so it runs only when enough
 * was written since the last one to matter: like autovacuum's analyze threshold, measured here in WAL written since,
 * which every insert, update, delete and load adds to. The last ANALYZE's WAL position is kept in the data folder.
 */
const MARKER = "quarry-analyzed-lsn";
/** WAL written since the last ANALYZE before statistics count as stale: a few thousand changed rows. */
export const STALE_AFTER_WAL_BYTES = 4 * 1024 * 1024;

/** ANALYZE when the statistics are stale (or never gathered in this folder); whether it ran. */
export async function analyzeIfStale(system: SqlRunner, dir: string, staleAfterBytes = STALE_AFTER_WAL_BYTES): Promise<boolean> {
  const recorded = readMarker(dir);
  if (recorded) {
    const [{ written }] = await system.query<{ written: string | null }>("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::text AS written", [recorded]);
    const bytes = Number(written);
    // Negative: the folder was restored from something older than its marker; gather again.
    if (Number.isFinite(bytes) && bytes >= 0 && bytes < staleAfterBytes) return false;
  }
  await analyzeNow(system, dir);
  return true;
}

/** ANALYZE now and remember where the WAL stood. */
export async function analyzeNow(system: SqlRunner, dir: string): Promise<void> {
  await system.exec("ANALYZE");
  const [{ lsn }] = await system.query<{ lsn: string }>("SELECT pg_current_wal_insert_lsn()::text AS lsn");
  fs.writeFileSync(path.join(dir, MARKER), lsn);
}

function readMarker(dir: string): string | null {
  try {
    const text = fs.readFileSync(path.join(dir, MARKER), "utf8").trim();
    return /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/i.test(text) ? text : null;
  } catch {
    return null;
  }
}
