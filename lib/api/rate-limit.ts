import "server-only";
import { getDb } from "@/lib/db/client";

export type RateLimitVerdict = { ok: true } | { ok: false; retryAfter: number };

/**
 * Fixed-window counters per (endpoint, caller). On a PostgreSQL server they live in the database
 * (migration 0011), counted with one atomic upsert, so every replica enforces the same limit. The
 * embedded engine belongs to one process, so there they stay in that process's memory, as before.
 */
export async function checkRateLimit(key: string, limit: number, windowSeconds: number): Promise<RateLimitVerdict> {
  const db = await getDb();
  if (db.kind !== "postgres") return checkInMemory(key, limit, windowSeconds, Date.now());
  // A window that has ended starts again at 1; otherwise the count goes up. Over the limit the
  // count keeps rising (harmless) and the caller learns when the window ends. The database's clock
  // decides, so replicas with skewed clocks agree.
  const [row] = await db.system.query<{ hits: number; retry_after: number }>(
    `INSERT INTO quarry_rate_limits AS w (key, expires_at, hits)
       VALUES ($1, now() + make_interval(secs => $2), 1)
     ON CONFLICT (key) DO UPDATE SET
       expires_at = CASE WHEN w.expires_at <= now() THEN EXCLUDED.expires_at ELSE w.expires_at END,
       hits = CASE WHEN w.expires_at <= now() THEN 1 ELSE w.hits + 1 END
     RETURNING hits, ceil(extract(epoch FROM expires_at - now()))::int AS retry_after`,
    [key, windowSeconds],
  );
  if (Math.random() < 0.01) void pruneExpiredRows();
  return row.hits <= limit ? { ok: true } : { ok: false, retryAfter: Math.max(1, row.retry_after) };
}

async function pruneExpiredRows() {
  try {
    const db = await getDb();
    await db.system.query("DELETE FROM quarry_rate_limits WHERE expires_at < now() - interval '1 minute'");
  } catch {
    // Pruning is housekeeping: the next one tries again.
  }
}

const windows = new Map<string, { start: number; count: number }>();

function checkInMemory(key: string, limit: number, windowSeconds: number, now: number): RateLimitVerdict {
  const windowMs = windowSeconds * 1000;
  const current = windows.get(key);
  if (!current || now - current.start >= windowMs) {
    windows.set(key, { start: now, count: 1 });
    if (windows.size > 50_000) pruneExpired(now, windowMs);
    return { ok: true };
  }
  if (current.count < limit) {
    current.count += 1;
    return { ok: true };
  }
  return { ok: false, retryAfter: Math.max(1, Math.ceil((current.start + windowMs - now) / 1000)) };
}

function pruneExpired(now: number, windowMs: number) {
  for (const [key, value] of windows) if (now - value.start >= windowMs) windows.delete(key);
}

/** Forgets every counter (tests). */
export async function resetRateLimits(): Promise<void> {
  windows.clear();
  const db = await getDb();
  if (db.kind === "postgres") await db.system.exec("DELETE FROM quarry_rate_limits");
}
