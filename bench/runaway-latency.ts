// `npm run bench -- runaway-latency [requests]`: p95 of `GET /api/v1/locations` (another
// organization, through the real route handler) on an idle server, then while an editor's
// runaway `sql` widget runs again and again at the default 10 s limit. Issue 12 aims at < 3x.
// Embedded default on a freshly seeded temporary data folder.
import { GET as locations } from "@/app/api/v1/locations/route";
import { withTenant } from "@/lib/db/tenant";
import { runWidgetQuery } from "@/lib/query/run";
import { call, tokenFor } from "@/test/helpers";
import { sqlWidgetDashboard } from "@/test/sql-widget-dashboard";
import { withSeededDb } from "./lib/seeded-db";

const RUNAWAY = "with recursive t(n) as (select 1 union all select n + 1 from t where n < 20000000) select count(*) as n from t";

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];

async function latencies(requests: number, token: string): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < requests; i++) {
    const started = performance.now();
    const res = await call(locations, "GET", "/api/v1/locations", { token });
    if (res.status !== 200) throw new Error(`locations answered ${res.status}`);
    ms.push(performance.now() - started);
    // About 20 requests a second: a steady stream, not a tight loop competing for the core.
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return ms;
}

export default async function bench(args: string[]): Promise<void> {
  const requests = Number(args[0] ?? 100);
  await withSeededDb("pglite", async (db) => {
    const token = await tokenFor("globex", "analyst");
    const dashboard = sqlWidgetDashboard(RUNAWAY);
    // Warm: modules, the analytics copy, the route's plans.
    await withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRawUnsafe("SELECT 1 AS one"), { role: "reader", readOnly: true });
    await latencies(20, token);

    const idle = await latencies(requests, token);
    let running = true;
    let cut = 0;
    const runaways = (async () => {
      while (running) {
        await runWidgetQuery({ scope: { orgId: "org_acme" }, dashboard, widgetId: "w", filterValues: {}, now: new Date(), timeZone: "UTC" }).catch(() => (cut += 1));
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const busy = await latencies(requests, token);
    running = false;
    await runaways;

    const idleP95 = percentile(idle, 95);
    const busyP95 = percentile(busy, 95);
    console.log(`GET /api/v1/locations (globex), ${requests} requests each, ${db.kind} embedded default (engine process + analytics copy)`);
    console.log(`  idle               p50 ${percentile(idle, 50).toFixed(1)} ms  p95 ${idleP95.toFixed(1)} ms`);
    console.log(`  runaway user SQL   p50 ${percentile(busy, 50).toFixed(1)} ms  p95 ${busyP95.toFixed(1)} ms  (runaways cut at 10 s: ${cut}, engine restarts: ${db.analytics?.current?.restarts ?? 0})`);
    console.log(`  ratio p95 busy/idle x${(busyP95 / idleP95).toFixed(2)} (aim < 3)`);
  });
}
