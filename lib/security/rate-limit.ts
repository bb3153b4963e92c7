import "server-only";
import { config } from "@/lib/config";
import { getDb } from "@/lib/db/client";
import { countHit, forgetCounts } from "@/lib/db/counters";
import { tooManyRequests } from "@/lib/errors";

/** Counts one request against `key`; a RateLimited error (429 with Retry-After) past the limit (times QUARRY_RATE_LIMIT_MULTIPLIER). */
export async function enforceLimit(key: string, rate: { limit: number; windowSeconds: number }): Promise<void> {
  const verdict = await checkRateLimit(key, rate.limit * config().api.rateLimitMultiplier, rate.windowSeconds);
  if (!verdict.ok) throw tooManyRequests(verdict.retryAfter);
}

export type RateLimitVerdict = { ok: true } | { ok: false; retryAfter: number };

/** Rate-limit keys among the shared counters. */
const PREFIX = "rate ";

/**
 * Fixed-window counters per (endpoint, caller). On a PostgreSQL server they are the shared counters
 * (lib/db/counters.ts), so every replica enforces the same limit. The embedded engine belongs to one
 * process, so there they stay in that process's memory, as before.
 */
export async function checkRateLimit(key: string, limit: number, windowSeconds: number): Promise<RateLimitVerdict> {
  const db = await getDb();
  if (db.kind !== "postgres") return checkInMemory(key, limit, windowSeconds, Date.now());
  // Over the limit the count keeps rising (harmless) and the caller learns when the window ends.
  const count = await countHit(PREFIX + key, windowSeconds);
  return count.hits <= limit ? { ok: true } : { ok: false, retryAfter: Math.max(1, count.secondsLeft) };
}

/** Each window keeps its own end, so pruning for one limit never resets a longer window of another. */
const windows = new Map<string, { endsAt: number; count: number }>();

function checkInMemory(key: string, limit: number, windowSeconds: number, now: number): RateLimitVerdict {
  const current = windows.get(key);
  if (!current || now >= current.endsAt) {
    windows.set(key, { endsAt: now + windowSeconds * 1000, count: 1 });
    if (windows.size > 50_000) pruneEnded(now);
    return { ok: true };
  }
  if (current.count < limit) {
    current.count += 1;
    return { ok: true };
  }
  return { ok: false, retryAfter: Math.max(1, Math.ceil((current.endsAt - now) / 1000)) };
}

function pruneEnded(now: number) {
  for (const [key, value] of windows) if (now >= value.endsAt) windows.delete(key);
}

/** Forgets every counter (tests). */
export async function resetRateLimits(): Promise<void> {
  windows.clear();
  const db = await getDb();
  if (db.kind === "postgres") await forgetCounts(PREFIX);
}
