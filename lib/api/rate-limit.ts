/**
 * Fixed-window counters per (endpoint, caller), kept in process memory. Enough
 * for one instance (the embedded default); behind several instances the limit
 * applies per instance.
 */
const windows = new Map<string, { start: number; count: number }>();

export function checkRateLimit(key: string, limit: number, windowSeconds: number, now = Date.now()): { ok: true } | { ok: false; retryAfter: number } {
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

export function resetRateLimits() {
  windows.clear();
}
