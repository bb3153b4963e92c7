import { describe, expect, it } from "vitest";
import { checkRateLimit, resetRateLimits } from "@/lib/security/rate-limit";
import { SIGN_IN_LIMITS, clearSignInFailures, recordSignInFailure, resetSignInThrottle, signInRetryAfter } from "@/lib/auth/throttle";
import { getDb } from "@/lib/db/client";
import { countHit, forgetCount, forgetCounts, readCounts } from "./counters";

// Near the database's clock: ended windows are pruned by it, now and then.
const T0 = new Date(Math.floor(Date.now() / 1000) * 1000);
const later = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

describe("shared counters (one table for rate limits and failed sign-ins)", () => {
  it("counts hits in a fixed window that starts at the first hit, and starts again at 1 once it ended", async () => {
    expect(await countHit("test a", 60, T0)).toEqual({ hits: 1, secondsLeft: 60 });
    expect(await countHit("test a", 60, later(10))).toEqual({ hits: 2, secondsLeft: 50 });
    expect(await countHit("test a", 60, later(59.5))).toEqual({ hits: 3, secondsLeft: 1 });
    expect(await countHit("test a", 60, later(60))).toEqual({ hits: 1, secondsLeft: 60 });
    expect((await readCounts(["test a", "test none"], later(61))).get("test a")).toEqual({ hits: 1, secondsLeft: 59 });
    expect((await readCounts(["test a"], later(120))).size).toBe(0);
    expect((await readCounts(["test none"], later(61))).size).toBe(0);
  });

  it("loses no hit to concurrency: each of 25 parallel hits gets its own count", async () => {
    const counts = await Promise.all(Array.from({ length: 25 }, () => countHit("test parallel", 60)));
    expect(counts.map((c) => c.hits).sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
  });

  it("forgets one key, or every key of a prefix", async () => {
    await Promise.all([countHit("test x 1", 60), countHit("test x 2", 60), countHit("other y", 60)]);
    await forgetCount("test x 1");
    expect([...(await readCounts(["test x 1", "test x 2", "other y"])).keys()].sort()).toEqual(["other y", "test x 2"]);
    await forgetCounts("test x");
    expect([...(await readCounts(["test x 1", "test x 2", "other y"])).keys()]).toEqual(["other y"]);
  });
});

describe("failed sign-ins on the shared counters", () => {
  const subject = (address: string, email = "someone@acme.test") => ({ email, address });

  it("throttles an account after its failures for the rest of the window, from any address; success clears the account", async () => {
    await resetSignInThrottle();
    for (let i = 0; i < SIGN_IN_LIMITS.account.failures - 1; i++) await recordSignInFailure(subject(`198.51.100.${i}`), T0);
    expect(await signInRetryAfter(subject("198.51.100.200"), later(1))).toBe(0);
    await recordSignInFailure(subject("198.51.100.99"), later(60));
    // The window started at the first failure.
    expect(await signInRetryAfter(subject("198.51.100.200"), later(60))).toBe(SIGN_IN_LIMITS.account.windowSeconds - 60);
    expect(await signInRetryAfter(subject("198.51.100.200", "SomeOne@acme.test "), later(100))).toBe(SIGN_IN_LIMITS.account.windowSeconds - 100);
    expect(await signInRetryAfter(subject("198.51.100.200"), later(SIGN_IN_LIMITS.account.windowSeconds))).toBe(0);
    await clearSignInFailures("someone@acme.test");
    expect(await signInRetryAfter(subject("198.51.100.200"), later(60))).toBe(0);
  });

  it("throttles an address guessing across accounts; a success does not clear the address", async () => {
    await resetSignInThrottle();
    const address = "192.0.2.10";
    for (let i = 0; i < SIGN_IN_LIMITS.address.failures; i++) await recordSignInFailure(subject(address, `u${i}@nowhere.test`), T0);
    expect(await signInRetryAfter(subject(address, "fresh@acme.test"), later(5))).toBe(SIGN_IN_LIMITS.address.windowSeconds - 5);
    expect(await signInRetryAfter(subject("192.0.2.11", "fresh@acme.test"), later(5))).toBe(0);
    await clearSignInFailures("u0@nowhere.test");
    expect(await signInRetryAfter(subject(address, "fresh@acme.test"), later(5))).toBeGreaterThan(0);
  });
});

describe("request rate limits", () => {
  it("allows `limit` hits per window, then answers the seconds left; a reset forgets them", async () => {
    await resetRateLimits();
    expect(await checkRateLimit("GET /x user a", 2, 30)).toEqual({ ok: true });
    expect(await checkRateLimit("GET /x user a", 2, 30)).toEqual({ ok: true });
    const refused = await checkRateLimit("GET /x user a", 2, 30);
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.retryAfter).toBeGreaterThanOrEqual(29);
    expect(await checkRateLimit("GET /x user b", 2, 30)).toEqual({ ok: true });
    await resetRateLimits();
    expect(await checkRateLimit("GET /x user a", 2, 30)).toEqual({ ok: true });
  });

  it("keeps server-mode limits in the shared table (every replica counts there) and embedded ones in memory", async () => {
    await resetRateLimits();
    await checkRateLimit("GET /y user a", 5, 30);
    const stored = await readCounts(["rate GET /y user a"]);
    expect(stored.get("rate GET /y user a")?.hits ?? 0).toBe((await getDb()).kind === "postgres" ? 1 : 0);
  });
});
