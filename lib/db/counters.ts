import "server-only";
import { getDb } from "@/lib/db/client";

/*
 * Fixed-window counters shared by every replica (table quarry_counters, migration 0021): the request
 * rate limits (lib/security/rate-limit.ts) and the failed sign-ins (lib/auth/throttle.ts) count here. A
 * window starts at its first hit and lasts `windowSeconds`; a window that has ended counts as none.
 * The clock is the database's unless the caller passes `at`, so replicas with skewed clocks agree.
 */

export interface Count {
  /** Hits in the current window (0: none). */
  hits: number;
  /** Whole seconds until the window ends (0: no window). */
  secondsLeft: number;
}

/** Counts one hit against `key` with one atomic upsert (a new window at 1 once the old one ended). */
export async function countHit(key: string, windowSeconds: number, at?: Date): Promise<Count> {
  const { system } = await getDb();
  const [row] = await system.query<{ hits: number; seconds_left: number }>(
    `WITH clock AS (SELECT coalesce($3::timestamptz, now()) AS now)
     INSERT INTO quarry_counters AS c (key, window_ends_at, hits)
       SELECT $1, clock.now + make_interval(secs => $2::double precision), 1 FROM clock
     ON CONFLICT (key) DO UPDATE SET
       window_ends_at = CASE WHEN c.window_ends_at <= (SELECT now FROM clock) THEN EXCLUDED.window_ends_at ELSE c.window_ends_at END,
       hits = CASE WHEN c.window_ends_at <= (SELECT now FROM clock) THEN 1 ELSE c.hits + 1 END
     RETURNING hits, ceil(extract(epoch FROM window_ends_at - (SELECT now FROM clock)))::int AS seconds_left`,
    [key, windowSeconds, at?.toISOString() ?? null],
  );
  if (Math.random() < 0.01) void pruneEndedWindows();
  return { hits: row.hits, secondsLeft: Math.max(0, row.seconds_left) };
}

/** The current counts of `keys`, without counting (keys without a running window are absent). */
export async function readCounts(keys: string[], at?: Date): Promise<Map<string, Count>> {
  const { system } = await getDb();
  const rows = await system.query<{ key: string; hits: number; seconds_left: number }>(
    `SELECT key, hits, ceil(extract(epoch FROM window_ends_at - coalesce($2::timestamptz, now())))::int AS seconds_left
       FROM quarry_counters WHERE key = ANY($1::text[]) AND window_ends_at > coalesce($2::timestamptz, now())`,
    [keys, at?.toISOString() ?? null],
  );
  return new Map(rows.map((r) => [r.key, { hits: r.hits, secondsLeft: r.seconds_left }]));
}

/** Forgets one counter. */
export async function forgetCount(key: string): Promise<void> {
  const { system } = await getDb();
  await system.query("DELETE FROM quarry_counters WHERE key = $1", [key]);
}

/** Forgets every counter whose key starts with `prefix` (tests, benchmarks). */
export async function forgetCounts(prefix: string): Promise<void> {
  const { system } = await getDb();
  await system.query("DELETE FROM quarry_counters WHERE starts_with(key, $1)", [prefix]);
}

async function pruneEndedWindows() {
  try {
    const { system } = await getDb();
    await system.query("DELETE FROM quarry_counters WHERE window_ends_at < now() - interval '1 minute'");
  } catch {
    // Pruning is housekeeping: the next one tries again.
  }
}
