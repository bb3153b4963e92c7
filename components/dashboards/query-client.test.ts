import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiClientError } from "@/components/api-client";
import { retryWhileBusy } from "./query-client";

afterEach(() => vi.useRealTimers());

const busy = (retryAfter: number | null = 1) => new ApiClientError(503, "The database is busy; retry shortly", retryAfter);

describe("retryWhileBusy (what the viewer does with a busy server)", () => {
  it("waits Retry-After, then twice as long, counting down each second, and returns the answer that finally comes", async () => {
    vi.useFakeTimers();
    const answers: (() => Promise<string>)[] = [() => Promise.reject(busy(2)), () => Promise.reject(busy(1)), () => Promise.resolve("rows")];
    const request = vi.fn(() => answers.shift()!());
    const waits: (number | null)[] = [];
    const result = retryWhileBusy(request, new AbortController().signal, (s) => waits.push(s));
    await vi.advanceTimersByTimeAsync(2_000 + 4_000);
    await expect(result).resolves.toBe("rows");
    expect(request).toHaveBeenCalledTimes(3);
    // 2 s (its Retry-After), then 4 s (twice the last wait; the second Retry-After of 1 s is shorter).
    expect(waits).toEqual([2, 1, null, 4, 3, 2, 1, null]);
  });

  it("gives up after the last attempt with the server's 503, and never retries another error or a 503 without Retry-After", async () => {
    vi.useFakeTimers();
    const always = vi.fn(() => Promise.reject(busy()));
    const result = retryWhileBusy(always, new AbortController().signal, () => undefined);
    const settled = expect(result).rejects.toMatchObject({ status: 503 });
    await vi.advanceTimersByTimeAsync(120_000);
    await settled;
    expect(always).toHaveBeenCalledTimes(7);

    const refused = vi.fn(() => Promise.reject(new ApiClientError(422, "bad filter")));
    await expect(retryWhileBusy(refused, new AbortController().signal, () => undefined)).rejects.toMatchObject({ status: 422 });
    expect(refused).toHaveBeenCalledTimes(1);
    // Past its budget: the same request would cost the same again.
    const overBudget = vi.fn(() => Promise.reject(busy(null)));
    await expect(retryWhileBusy(overBudget, new AbortController().signal, () => undefined)).rejects.toMatchObject({ status: 503 });
    expect(overBudget).toHaveBeenCalledTimes(1);
  });

  it("stops waiting when the request is aborted (a newer filter change)", async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const request = vi.fn(() => Promise.reject(busy(5)));
    const result = retryWhileBusy(request, controller.signal, () => undefined);
    const settled = expect(result).rejects.toBeDefined();
    await vi.advanceTimersByTimeAsync(1_500);
    controller.abort();
    await settled;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(request).toHaveBeenCalledTimes(1);
  });
});
