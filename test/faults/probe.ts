import { expect } from "vitest";
import * as locations from "@/app/api/v1/locations/route";
import { call, tokenFor } from "@/test/helpers";
import { measurePace, paced } from "@/test/machine-pace";

/** The machine's pace, measured as a fault test starts (test/machine-pace.ts): every fault test's bounds stretch by it. */
export const PACE = measurePace();

/** How long another organization's plain request may take while a fault runs: 3 s on a quiet 2-core machine, stretched by the pace. */
export const QUICK_MS = paced(3_000, PACE);

export interface ProbeReport<T> {
  /** The fault's own outcome (its value, or the error it threw). */
  outcome: T | unknown;
  faultMs: number;
  /** Latencies of GET /api/v1/locations as globex's admin, issued one after another while the fault ran. */
  probeMs: number[];
  probeStatuses: number[];
}

/**
 * Runs `fault` and, until it settles, asks for another organization's locations again and
 * again (each answer awaited before the next request), measuring every answer.
 */
export async function probeWhile<T>(fault: () => Promise<T>): Promise<ProbeReport<T>> {
  const token = await tokenFor("globex", "admin");
  // Unmeasured: the first request of a test file also opens the database.
  expect((await call(locations.GET, "GET", "/api/v1/locations", { token })).status).toBe(200);
  const started = performance.now();
  let settled = false;
  let faultMs = 0;
  const running = fault().then(
    (value) => value as T | unknown,
    (error: unknown) => error,
  ).finally(() => {
    settled = true;
    faultMs = performance.now() - started;
  });
  const probeMs: number[] = [];
  const probeStatuses: number[] = [];
  do {
    const asked = performance.now();
    const res = await call(locations.GET, "GET", "/api/v1/locations", { token });
    probeMs.push(performance.now() - asked);
    probeStatuses.push(res.status);
    await new Promise((resolve) => setTimeout(resolve, 20));
  } while (!settled);
  return { outcome: await running, faultMs, probeMs, probeStatuses };
}
