import "@/test/embedded-analytics";
import { describe, expect, it } from "vitest";
import { GET as health } from "@/app/api/health/route";
import { GET as locations } from "@/app/api/v1/locations/route";
import { configSingleton } from "@/lib/config";
import { getDb } from "@/lib/db/client";
import { Unavailable } from "@/lib/errors";
import { userSqlQueue } from "@/lib/query/execute";
import { runWidgetQuery } from "@/lib/query/run";
import { call, tokenFor } from "@/test/helpers";
import { paced } from "@/test/machine-pace";
import { sqlWidgetDashboard } from "@/test/sql-widget-dashboard";
import { PACE } from "./probe";

/*
 * Issue 26: sixteen concurrent runaway statements of one organization held another organization's
 * requests for 10-30 s and made some answer 500. User SQL now waits in its organization's own line
 * (lib/query/fair-queue.ts) for one of the process's slots, on a pool of its own: acme's runaways
 * hold at most their share (one embedded analytics engine), globex's queries are served beside them
 * (on a spare engine), the app's own routes never wait behind them, and what cannot start before the deadline answers 503 with Retry-After.
 */
process.env.QUARRY_USER_SQL_QUEUE_MS = "6000";
configSingleton.set(undefined);

const LIMIT_MS = 3_000;
const RUNAWAY = "select count(*) as n from generate_series(1, 1000000000)";
const LIGHT = "select channel, count(*)::int as n from orders group by channel order by channel";
/** The light query's own limit: the default 10 s, stretched by the pace (a loaded PGlite took over 3 s for it). */
const LIGHT_LIMIT_MS = paced(10_000, PACE);

const runUserSql = (orgId: string, query: string, statementTimeoutMs = LIMIT_MS) =>
  runWidgetQuery({ scope: { orgId }, dashboard: sqlWidgetDashboard(query), widgetId: "w", filterValues: {}, now: new Date(), timeZone: "UTC", statementTimeoutMs });

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

describe("sixteen runaway statements of one organization", () => {
  it("leave another organization's queries and the app's routes served, and turn their own excess away with 503", async () => {
    const globexToken = await tokenFor("globex", "admin");
    // Warm, outside the measured part.
    await runUserSql("org_globex", LIGHT, LIGHT_LIMIT_MS);
    const idle = [];
    for (let i = 0; i < 3; i++) idle.push((await timed(() => runUserSql("org_globex", LIGHT, LIGHT_LIMIT_MS))).ms);

    const runaways = Array.from({ length: 16 }, () => runUserSql("org_acme", RUNAWAY).then(() => "finished", (error: unknown) => error));
    // All sixteen in acme's line, running or waiting.
    await userSqlQueue().until(({ lines }) => (lines.org_acme?.running ?? 0) + (lines.org_acme?.waiting ?? 0) === 16);

    const healthCall = await timed(() => call(health, "GET", "/api/health"));
    expect(healthCall.value.status).toBe(200);
    const globexLocations = await timed(() => call(locations, "GET", "/api/v1/locations", { token: globexToken }));
    expect(globexLocations.value.status).toBe(200);

    const busy = [];
    for (let i = 0; i < 3; i++) {
      const { value, ms } = await timed(() => runUserSql("org_globex", LIGHT, LIGHT_LIMIT_MS));
      expect(value.rows.length).toBeGreaterThan(0);
      busy.push(ms);
    }
    const outcomes = await Promise.all(runaways);
    console.log(
      `user SQL fairness: globex idle ${idle.map((ms) => ms.toFixed(0)).join("/")} ms, during 16 acme runaways ${busy.map((ms) => ms.toFixed(0)).join("/")} ms; ` +
        `health ${healthCall.ms.toFixed(0)} ms, locations ${globexLocations.ms.toFixed(0)} ms`,
    );

    // Each runaway either hit its own time limit or was turned away for want of a slot, never a 500.
    const timedOut = outcomes.filter((o) => (o as { code?: string }).code === "timeout");
    const turnedAway = outcomes.filter((o) => o instanceof Unavailable);
    expect(timedOut.length + turnedAway.length).toBe(16);
    expect(timedOut.length).toBeGreaterThan(0);
    expect(turnedAway.length).toBeGreaterThan(0);
    for (const refused of turnedAway) expect((refused as Unavailable).retryAfterSeconds).toBe(5);
    // Globex ran on a spare analytics engine beside acme's runaway (its first request may wait for
    // the spare to start), never behind more than one runaway.
    const { analytics } = await getDb();
    if (analytics) expect(analytics.running).toBe(2);
    expect(Math.max(...busy.slice(1))).toBeLessThan(LIMIT_MS + paced(4_000, PACE));
  }, paced(120_000, PACE));
});
