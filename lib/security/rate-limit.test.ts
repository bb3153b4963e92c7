import { afterEach, describe, expect, it, vi } from "vitest";
import { configSingleton } from "@/lib/config";
import { getDb } from "@/lib/db/client";
import { checkRateLimit, enforceLimit, resetRateLimits } from "./rate-limit";

afterEach(async () => {
  vi.useRealTimers();
  await resetRateLimits();
});

describe("checkRateLimit", () => {
  it("counts per key in fixed windows and says when the window ends", async () => {
    expect(await checkRateLimit("test a", 2, 60)).toEqual({ ok: true });
    expect(await checkRateLimit("test a", 2, 60)).toEqual({ ok: true });
    const refused = await checkRateLimit("test a", 2, 60);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.retryAfter).toBeGreaterThanOrEqual(59);
    expect(await checkRateLimit("test b", 2, 60)).toEqual({ ok: true });
  });

  it("keeps a long window when a flood of short-window keys makes the embedded limiter prune", async () => {
    // The server path keeps counters in the database (lib/db/counters.test.ts); this is the in-process one.
    if ((await getDb()).kind === "postgres") return;
    vi.useFakeTimers({ toFake: ["Date"] });
    expect(await checkRateLimit("test hourly", 1, 3600)).toEqual({ ok: true });
    expect((await checkRateLimit("test hourly", 1, 3600)).ok).toBe(false);
    // Two seconds on, 50,001 callers of a 1-second limit: pruning removes their ended windows only.
    vi.setSystemTime(Date.now() + 2_000);
    for (let i = 0; i <= 50_000; i++) await checkRateLimit(`test flood ${i}`, 10, 1);
    expect((await checkRateLimit("test hourly", 1, 3600)).ok).toBe(false);
  });
});

describe("QUARRY_RATE_LIMIT_MULTIPLIER (benches, load tests)", () => {
  it("multiplies every limit and still counts: 3 x 2 requests pass, the seventh is refused with Retry-After", async () => {
    process.env.QUARRY_RATE_LIMIT_MULTIPLIER = "3";
    configSingleton.set(undefined);
    try {
      for (let i = 0; i < 6; i++) await enforceLimit("test multiplied", { limit: 2, windowSeconds: 60 });
      await expect(enforceLimit("test multiplied", { limit: 2, windowSeconds: 60 })).rejects.toMatchObject({ retryAfterSeconds: expect.any(Number) });
    } finally {
      delete process.env.QUARRY_RATE_LIMIT_MULTIPLIER;
      configSingleton.set(undefined);
    }
    // Back to the declared limit.
    await enforceLimit("test declared", { limit: 1, windowSeconds: 60 });
    await expect(enforceLimit("test declared", { limit: 1, windowSeconds: 60 })).rejects.toBeDefined();
  });
});
