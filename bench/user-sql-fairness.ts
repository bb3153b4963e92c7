// `npm run bench -- user-sql-fairness [requests] [--engine pglite|postgres]`: another organization's
// light `sql` widget query and `/api/health`, p50/p95 on an idle server, then while one organization
// keeps 16 runaway statements in flight (each cut at 3 s, resubmitted as it ends). Issue 26 aims at
// p95 busy/idle <= 3 on both engines. The baseline is the same requests, idle, in the same run.
import { GET as health } from "@/app/api/health/route";
import { Unavailable } from "@/lib/errors";
import { runWidgetQuery } from "@/lib/query/run";
import { call } from "@/test/helpers";
import { sqlWidgetDashboard } from "@/test/sql-widget-dashboard";
import { withSeededDb } from "./lib/seeded-db";

const RUNAWAY = "select count(*) as n from generate_series(1, 1000000000)";
const LIGHT = "select channel, count(*)::int as n from orders group by channel order by channel";
const RUNAWAY_LIMIT_MS = 3_000;

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const light = sqlWidgetDashboard(LIGHT);
const runaway = sqlWidgetDashboard(RUNAWAY);

async function sample(requests: number): Promise<{ query: number[]; health: number[]; busy503: number }> {
  const query: number[] = [];
  const healthMs: number[] = [];
  let busy503 = 0;
  for (let i = 0; i < requests; i++) {
    let started = performance.now();
    try {
      await runWidgetQuery({ scope: { orgId: "org_globex" }, dashboard: light, widgetId: "w", filterValues: {}, now: new Date(), timeZone: "UTC" });
    } catch (error) {
      if (!(error instanceof Unavailable)) throw error;
      busy503++;
    }
    query.push(performance.now() - started);
    started = performance.now();
    const res = await call(health, "GET", "/api/health");
    if (res.status !== 200) throw new Error(`health answered ${res.status}`);
    healthMs.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { query, health: healthMs, busy503 };
}

export default async function bench(args: string[]): Promise<void> {
  const requests = Number(args.find((a) => /^\d+$/.test(a)) ?? 30);
  const engineArg = args.includes("--engine") ? args[args.indexOf("--engine") + 1] : undefined;
  const engines = (engineArg ? [engineArg] : ["pglite", ...(process.env.QUARRY_TEST_DATABASE_URL ? ["postgres"] : [])]) as ("pglite" | "postgres")[];
  for (const engine of engines) {
    await withSeededDb(engine, async (db) => {
      await sample(5);
      const idle = await sample(requests);
      let running = true;
      const outcomes = { timeout: 0, turnedAway: 0 };
      const oneRunaway = async () => {
        while (running) {
          await runWidgetQuery({ scope: { orgId: "org_acme" }, dashboard: runaway, widgetId: "w", filterValues: {}, now: new Date(), timeZone: "UTC", statementTimeoutMs: RUNAWAY_LIMIT_MS }).catch(
            (error: unknown) => (error instanceof Unavailable ? outcomes.turnedAway++ : outcomes.timeout++),
          );
        }
      };
      const runaways = Array.from({ length: 16 }, oneRunaway);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const busy = await sample(requests);
      running = false;
      await Promise.all(runaways);
      const line = (name: string, xs: number[]) => `p50 ${percentile(xs, 50).toFixed(0)} ms  p95 ${percentile(xs, 95).toFixed(0)} ms`;
      console.log(`${db.kind}: globex while acme keeps 16 runaway statements in flight (${requests} requests each side)`);
      console.log(`  sql widget  idle ${line("idle", idle.query)} | busy ${line("busy", busy.query)} | p95 busy/idle x${(percentile(busy.query, 95) / percentile(idle.query, 95)).toFixed(2)} (aim <= 3); 503s ${busy.busy503}`);
      console.log(`  /api/health idle ${line("idle", idle.health)} | busy ${line("busy", busy.health)} | p95 busy/idle x${(percentile(busy.health, 95) / percentile(idle.health, 95)).toFixed(2)}`);
      console.log(`  acme's runaways: ${outcomes.timeout} cut at their ${RUNAWAY_LIMIT_MS / 1000} s limit, ${outcomes.turnedAway} turned away with 503`);
    });
  }
}
