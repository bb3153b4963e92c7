import "@/test/embedded-analytics";
import { describe, expect, it } from "vitest";
import { GET as health } from "@/app/api/health/route";
import { GET as locations } from "@/app/api/v1/locations/route";
import { getDb } from "@/lib/db/client";
import { withTenant } from "@/lib/db/tenant";
import { userSqlQueue } from "@/lib/query/execute";
import { runWidgetQuery } from "@/lib/query/run";
import { call, tokenFor } from "@/test/helpers";
import { paced } from "@/test/machine-pace";
import { sqlWidgetDashboard } from "@/test/sql-widget-dashboard";
import { PACE } from "./probe";

// A short limit keeps the suite quick; the mechanism is the same at the default 10 s.
const LIMIT_MS = 2_000;
/** "Within the limit plus a few seconds" (on a quiet machine): the caller is answered as the engine is killed, before it is back. */
const ANSWER_WITHIN_MS = LIMIT_MS + paced(3_000, PACE);
/** Other requests while the runaway runs: 1.5 s on a quiet 2-core machine, stretched by the pace. */
const QUICK_MS = paced(1_500, PACE);

const RUNAWAYS = {
  "a recursive CTE of 20 million rows": "with recursive t(n) as (select 1 union all select n + 1 from t where n < 20000000) select count(*) as n from t",
  "a generate_series of 10^9 rows": "select count(*) as n from generate_series(1, 1000000000)",
};

const runUserSql = (query: string) =>
  runWidgetQuery({ scope: { orgId: "org_acme" }, dashboard: sqlWidgetDashboard(query), widgetId: "w", filterValues: {}, now: new Date(), timeZone: "UTC", statementTimeoutMs: LIMIT_MS });

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

describe("a runaway user query on the embedded engine", () => {
  it.each(Object.entries(RUNAWAYS))("%s ends with the timeout error at its limit while the service keeps answering", async (_name, query) => {
    const db = await getDb();
    // Committed before the fault: must survive it.
    await db.system.query("INSERT INTO locations (id, org_id, code, name, city, region) VALUES ($1, 'org_acme', $2, 'Fault test', 'Boston', 'East') ON CONFLICT (id) DO NOTHING", ["loc_acme_fault", "FLT"]);
    // Warm, outside the timed part: the analytics copy is refreshed after that write, and the routes' modules load.
    await runUserSql("select count(*)::int as n from locations");
    await call(health, "GET", "/api/health");
    await call(locations, "GET", "/api/v1/locations", { token: await tokenFor("globex", "admin") });

    const runaway = timed(() => runUserSql(query).then(() => null, (error: unknown) => error));
    // Under way once it holds acme's slot.
    await userSqlQueue().until((state) => state.lines.org_acme?.running === 1);

    const healthCall = await timed(() => call(health, "GET", "/api/health"));
    expect(healthCall.value.status).toBe(200);
    expect(healthCall.ms).toBeLessThan(QUICK_MS);
    const globex = await timed(async () => call(locations, "GET", "/api/v1/locations", { token: await tokenFor("globex", "admin") }));
    expect(globex.value.status).toBe(200);
    expect(globex.value.json.total).toBe(4);
    expect(globex.ms).toBeLessThan(QUICK_MS);

    const { value: error, ms } = await runaway;
    expect(error).toMatchObject({ name: "QueryError", code: "timeout", message: "The query ran longer than its time limit of 2 s and was cancelled" });
    expect(ms).toBeLessThan(ANSWER_WITHIN_MS);
    expect(ms).toBeGreaterThan(LIMIT_MS - 100);

    // The next query works (after the analytics engine's restart), and nothing committed is lost.
    const after = await runUserSql("select count(*)::int as n from locations");
    expect(after.rows).toEqual([{ n: 6 }]);
    expect(await db.system.query("SELECT name FROM locations WHERE id = 'loc_acme_fault'")).toEqual([{ name: "Fault test" }]);
  }, paced(60_000, PACE));

  // The engine restart is the embedded default's own mechanism; a PostgreSQL server cancels the statement itself.
  it.skipIf(process.env.QUARRY_TEST_ENGINE === "postgres")("a service statement past its limit restarts the primary engine, keeping committed data", async () => {
    const db = await getDb();
    const before = db.engine!.restarts;
    await db.system.query("INSERT INTO locations (id, org_id, code, name, city, region) VALUES ('loc_acme_kept', 'org_acme', 'KPT', 'Kept', 'Denver', 'West')");

    const { value: error, ms } = await timed(() =>
      withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRawUnsafe("select count(*) from generate_series(1, 1000000000)"), { statementTimeoutMs: LIMIT_MS }).then(() => null, (e: unknown) => e),
    );
    expect(ms).toBeLessThan(ANSWER_WITHIN_MS);
    expect(JSON.stringify(error)).toContain("57014");
    expect(JSON.stringify(error)).toContain("its time limit of 2 s");
    expect(db.engine!.restarts).toBe(before + 1);

    // Requests made during the restart wait for the new engine instead of failing.
    const res = await call(locations, "GET", "/api/v1/locations", { token: await tokenFor("acme", "admin") });
    expect(res.status).toBe(200);
    expect(res.json.items.map((l: { code: string }) => l.code)).toContain("KPT");
    expect((await call(health, "GET", "/api/health")).status).toBe(200);
  }, paced(60_000, PACE));
});
