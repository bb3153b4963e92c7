// npm run bench -- dashboard-endpoint [--engine pglite|postgres|both] [--scale 1,10,100] [--concurrency 1,8] [--cold N] [--rollups on|off|both]:
// latency of POST /api/v1/custom-dashboards/{id}/query for the seeded sample dashboard (real route
// handler: auth, zod, rate limits, one tenant transaction per request, cache), cold (every request a new
// 31-day date range, so nothing is cached) and warm (a few filter values over and over: cache hits), at each
// concurrency, beside the bare SQL of the same widgets in the same run: the statements of one widget
// each (what the engine ran before shared scans) and the shared-scan statements the engine runs now,
// sequential in one transaction. With --rollups (both by default) the endpoint runs with the sample's rollups
// built (time of the build printed) and without them (marked pending: the tables answer), and the bare SQL
// of the shared scans is timed over the rollups too (docs/rollups.md). At each scale the demo orders are copied N times over the same two
// years (N× as many orders per day). On PGlite, and on PostgreSQL too when QUARRY_TEST_DATABASE_URL is
// set (both in one run; PostgreSQL uses the seeded `quarry_bench` database, copies removed at the end).
//
// Each concurrent client is its own analyst, as eight analysts would be; at concurrency 1 one analyst
// sends every request (hundreds a minute), so the run raises QUARRY_RATE_LIMIT_MULTIPLIER instead of
// tripping the endpoint's per-user limit: requests are still counted, as in production.
import { NextRequest } from "next/server";
import { POST as seedRoute } from "@/app/api/v1/custom-dashboards/%5Fseed/route";
import { POST as queryRoute } from "@/app/api/v1/custom-dashboards/[id]/query/route";
import { issueLocalToken } from "@/lib/auth/local-issuer";
import { findOrganization } from "@/lib/auth/directory";
import type { Database } from "@/lib/db/client";
import { forgetDashboardResults } from "@/lib/dashboards/result-cache";
import { withTenant } from "@/lib/db/tenant";
import { closeQueue } from "@/lib/job-queue";
import { refreshOrganizationRollups } from "@/lib/rollups/build";
import { dashboardRollups } from "@/lib/query/rollup-definition";
import { freshRollups } from "@/lib/rollups/registry";
import type { BuiltRollup } from "@/lib/query/rollup-routing";
import { runReadOnlyBatch } from "@/lib/query/execute";
import { runWidgetQuery, planWidget, sharedScans } from "@/lib/query/run";
import { compileSharedWarehouseStatements, compileWarehouseStatements, loadSampleDashboard, rollupAnsweredWidgets, warehouseWidgets } from "./lib/sample-statements";

import { benchEngines } from "./lib/scratch-db";
import { withSeededDb } from "./lib/seeded-db";

const warehouseWidgetIds = (dashboard: ReturnType<typeof loadSampleDashboard>["dashboard"]) => warehouseWidgets(dashboard).map((w) => w.metadata.id);

const WARM_REQUESTS = 200;
const WARM_FILTERS = 8;

type Handler = (req: NextRequest, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

async function post(handler: Handler, url: string, token: string, body: unknown, params: Record<string, string> = {}) {
  const req = new NextRequest(new URL(url, "http://localhost"), {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const res = await handler(req, { params: Promise.resolve(params) });
  if (res.status === 503) {
    busyDetail = `${((await res.json()) as { detail?: unknown }).detail ?? ""} (Retry-After: ${res.headers.get("retry-after") ?? "none"})`;
    return busy;
  }
  if (!res.ok) throw new Error(`${url} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/** A 503 (no engine slot or connection in time, or past the request's budget): counted apart, not timed as an answer. */
const busy = Symbol("503");
/** What the last 503 said, printed beside the count. */
let busyDetail = "";

/** Runs `count` jobs with at most `concurrency` in flight; returns each job's latency in ms and the wall time. */
async function load(count: number, concurrency: number, job: (i: number, worker: number) => Promise<unknown>) {
  const latencies: number[] = [];
  let unavailable = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (next < count) {
        const i = next++;
        const t = performance.now();
        if ((await job(i, worker)) === busy) unavailable++;
        else latencies.push(performance.now() - t);
      }
    }),
  );
  return { latencies, unavailable, wallMs: performance.now() - started };
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))];
/**
 * A date filter no earlier request used: 31 days from a day counted from 2025-01-01, the size of
 * the sample's default ("last month"), so each request reads about 1/24 of the two years' orders.
 */
const dateFilter = (day: number) => {
  const from = Date.UTC(2025, 0, 1) + (day % 600) * 86_400_000;
  const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return { date: `${iso(from)} to ${iso(from + 30 * 86_400_000)}` };
};

function listArg(args: string[], flag: string, fallback: number[]): number[] {
  const at = args.indexOf(flag);
  if (at < 0) return fallback;
  const values = (args[at + 1] ?? "").split(",").map(Number);
  if (values.length === 0 || values.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`${flag} takes whole numbers >= 1, e.g. 1,10`);
  return values;
}

export default async function bench(args: string[]): Promise<void> {
  const scales = listArg(args, "--scale", [1]);
  const concurrencies = listArg(args, "--concurrency", [1, 8]);
  const cold = args.includes("--cold") ? listArg(args, "--cold", [])[0] : undefined;
  const rollupArg = args.includes("--rollups") ? args[args.indexOf("--rollups") + 1] : "both";
  if (!["on", "off", "both"].includes(rollupArg)) throw new Error("--rollups takes on, off or both");
  const modes: ("on" | "off")[] = rollupArg === "both" ? ["off", "on"] : [rollupArg as "on" | "off"];
  process.env.QUARRY_RATE_LIMIT_MULTIPLIER = "1000";
  for (const engine of benchEngines(args)) {
    await withSeededDb(engine, async (db) => {
      try {
        await run(db, engine, scales, concurrencies, cold, modes);
      } finally {
        // A query that found the rollups stale asked the worker for a refresh, which opened the job queue: close it, or the bench never exits.
        await closeQueue();
      }
    });
  }
}

/** Builds (or refreshes) acme's rollups and returns the fresh ones, or marks them pending so the tables answer. */
async function setRollups(mode: "on" | "off", dashboard: ReturnType<typeof loadSampleDashboard>["dashboard"], timeZone: string): Promise<BuiltRollup[]> {
  if (mode === "off") {
    await withTenant({ orgId: "org_acme" }, (tx) => tx.$executeRaw`UPDATE rollups SET state = 'pending'`);
    return [];
  }
  const started = performance.now();
  const outcomes = await refreshOrganizationRollups("org_acme");
  const built = outcomes.filter((o) => o.state !== "skipped");
  if (built.length > 0) {
    console.log(
      `    rollups built in ${((performance.now() - started) / 1000).toFixed(1)} s: ` +
        built.map((o) => `${o.name} ${o.rows.toLocaleString("en-US")} rows (${o.bucketsWritten}/${o.buckets} days written)${o.error ? ` FAILED ${o.error}` : ""}`).join(", "),
    );
  }
  return (await freshRollups({ orgId: "org_acme" }, dashboardRollups(dashboard.datasets.values()), timeZone)).fresh;
}

/** Orders copied beyond the demo's get ids from here on (the demo's are below 3e9), as in bench dashboard-queries. */
const COPY_ID_BASE = 10_000_000_000;

async function run(db: Database, engine: "pglite" | "postgres", scales: number[], concurrencies: number[], coldOverride: number | undefined, modes: ("on" | "off")[]): Promise<void> {
  const token = await issueLocalToken({ userId: "usr_acme_admin", orgSlug: "acme", role: "admin" });
  const seeded = (await post(seedRoute as Handler, "/api/v1/custom-dashboards/_seed", token, undefined)) as { id: string };
  // Each worker is a caller of its own (rate limits count per caller), and a token must name an active member.
  await db.system.query(
    `INSERT INTO users (id, org_id, email, name, role, location_ids, password_hash)
     SELECT 'usr_acme_bench_' || k, org_id, 'bench' || k || '@acme.test', 'Bench analyst ' || k, role, location_ids, password_hash
       FROM users, generate_series(0, $1::int - 1) AS k WHERE id = 'usr_acme_analyst' ON CONFLICT (id) DO NOTHING`,
    [Math.max(...concurrencies)],
  );
  const analysts = await Promise.all(
    Array.from({ length: Math.max(...concurrencies) }, (_, k) => issueLocalToken({ userId: `usr_acme_bench_${k}`, orgSlug: "acme", role: "analyst" })),
  );
  const query = (filters: Record<string, unknown>, worker: number) =>
    post(queryRoute as Handler, `/api/v1/custom-dashboards/${seeded.id}/query`, analysts[worker], { filters }, { id: seeded.id });
  const { dashboard } = loadSampleDashboard();
  const timeZone = (await findOrganization("org_acme"))?.timeZone ?? "UTC";
  const [{ demo }] = await db.system.query<{ demo: number }>("SELECT count(*)::int AS demo FROM orders WHERE id < $1", [COPY_ID_BASE]);
  await db.system.query("DELETE FROM orders WHERE id >= $1", [COPY_ID_BASE]);

  console.log(`\n[${engine}] POST /api/v1/custom-dashboards/{id}/query, sample dashboard (${dashboard.widgets.length} widgets); latency includes queueing`);
  let day = 0;
  let copies = 1;
  try {
    for (const scale of scales) {
      const loadStarted = performance.now();
      for (; copies < scale; copies++) {
        await db.system.query(
          `INSERT INTO orders (id, org_id, order_date, location_id, product_id, channel, customer_id, quantity, amount, cost)
           SELECT id + $1::bigint * $2::bigint, org_id, order_date, location_id, product_id, channel, customer_id, quantity, amount, cost FROM orders WHERE id < $2::bigint`,
          [copies, COPY_ID_BASE],
        );
      }
      await db.system.exec("ANALYZE orders");
      // Cached results were computed on fewer orders.
      forgetDashboardResults("org_acme", seeded.id);
      await query(dateFilter(day++), 0); // warm-up: manifest parse cache, plans, the analytics copy of the new rows
      console.log(`\n  ${scale}x: ${(demo * scale).toLocaleString("en-US")} acme+globex orders (load ${((performance.now() - loadStarted) / 1000).toFixed(1)} s)`);

      const samples = scale >= 10 ? 5 : 10;
      const rollups = modes.includes("on") ? await setRollups("on", dashboard, timeZone) : [];
      const bare = await bareSql(dashboard, timeZone, samples, () => dateFilter(day++), rollups);
      console.log(`    bare SQL p50, one statement per widget  ${bare.perWidget.toFixed(1).padStart(8)} ms  (${bare.perWidgetCount} statements, one transaction, sequential, ${samples} filter values)`);
      console.log(`    bare SQL p50, shared scans              ${bare.shared.toFixed(1).padStart(8)} ms  (${bare.sharedCount} statements for the same widgets, from the tables)`);
      if (bare.rollup !== undefined) {
        console.log(`    bare SQL p50, shared scans on rollups   ${bare.rollup.toFixed(1).padStart(8)} ms  (${bare.rollupCount} statements, widgets a rollup answers read it)`);
        console.log(
          `      of which the ${bare.answered} widgets a rollup answers: ${bare.answeredOnRollups!.toFixed(1)} ms from rollups vs ${bare.answeredOnTables!.toFixed(1)} ms from the tables (shared scans both ways); the others ${bare.others!.toFixed(1)} ms`,
        );
        const exact = await exactness(dashboard, timeZone, rollups, Array.from({ length: 4 }, () => dateFilter(day++)));
        console.log(`    exactness: ${exact.equal}/${exact.compared} widget answers from rollups equal to the tables' (${exact.routed} of them from a rollup; 4 date filters x 2 scopes)`);
      }

      for (const mode of modes) {
      if (modes.length > 1 || mode === "off") await setRollups(mode, dashboard, timeZone);
      forgetDashboardResults("org_acme", seeded.id);
      console.log(`    rollups ${mode}:`);
      for (const concurrency of concurrencies) {
        const coldCount = coldOverride ?? (concurrency === 1 ? 12 : 3 * concurrency);
        const first = day;
        day += coldCount;
        const coldRun = await load(coldCount, concurrency, (i, worker) => query(dateFilter(first + i), worker));
        const hot = Array.from({ length: WARM_FILTERS }, () => dateFilter(day++));
        for (const filters of hot) await query(filters, 0);
        const warmRun = await load(WARM_REQUESTS, concurrency, (i, worker) => query(hot[i % hot.length], worker));
        const line = (name: string, r: { latencies: number[]; unavailable: number; wallMs: number }, note: string) =>
          `    c=${String(concurrency).padEnd(2)} ${name.padEnd(5)} p50 ${pct(r.latencies, 50)?.toFixed(1).padStart(8)} ms  p95 ${pct(r.latencies, 95)?.toFixed(1).padStart(8)} ms  ` +
          `${((r.latencies.length / r.wallMs) * 1000).toFixed(1).padStart(7)} req/s  p50/bare ${(pct(r.latencies, 50) / bare.perWidget).toFixed(2)}x  (${note}${r.unavailable > 0 ? `; ${r.unavailable} answered 503, the last: ${busyDetail}` : ""})`;
        console.log(line("cold", coldRun, `${coldCount} requests, each a new date filter`));
        console.log(line("warm", warmRun, `${WARM_REQUESTS} requests over ${WARM_FILTERS} cached filter values`));
      }
      }
    }
  } finally {
    await db.system.query("DELETE FROM orders WHERE id >= $1", [COPY_ID_BASE]);
  }
}

/**
 * Every data widget answered with the rollups and from the tables, as the endpoint runs them (one batch,
 * shared scans), for each filter value, unscoped and under a three-location scope: how many answers are equal.
 */
async function exactness(dashboard: ReturnType<typeof loadSampleDashboard>["dashboard"], timeZone: string, rollups: readonly BuiltRollup[], filterSets: Record<string, unknown>[]) {
  const widgets = dashboard.widgets.filter((w) => w.spec.data).map((w) => w.metadata.id);
  const answers = async (scope: { orgId: string; locationIds?: string[] }, filterValues: Record<string, unknown>, using: readonly BuiltRollup[]) => {
    const base = { scope, dashboard, filterValues, now: new Date(), timeZone, rollups: using };
    const shared = sharedScans(widgets.map((widgetId) => planWidget({ ...base, widgetId })), base.rollups);
    const out = new Map<string, { rows: unknown[]; source?: { kind: string } }>();
    await runReadOnlyBatch(scope, widgets, { timeZone, transactionTimeoutMs: 600_000, statementTimeoutMs: 600_000 }, async (widgetId, runner) => {
      out.set(widgetId, await runWidgetQuery({ ...base, widgetId, runner, shared, statementTimeoutMs: 600_000 }));
    });
    return out;
  };
  let compared = 0;
  let equal = 0;
  let routed = 0;
  for (const scope of [{ orgId: "org_acme" }, { orgId: "org_acme", locationIds: ["loc_acme_nyc", "loc_acme_bos", "loc_acme_chi"] }]) {
    for (const filters of filterSets) {
      const [tables, fromRollups] = [await answers(scope, filters, []), await answers(scope, filters, rollups)];
      for (const id of widgets) {
        compared++;
        if (JSON.stringify(tables.get(id)?.rows) === JSON.stringify(fromRollups.get(id)?.rows)) equal++;
        else console.log(`    NOT EQUAL: widget ${id}, ${JSON.stringify({ scope, filters })}`);
        if (fromRollups.get(id)?.source?.kind === "rollup") routed++;
      }
    }
  }
  return { compared, equal, routed };
}

/**
 * The sample's warehouse widget statements for `samples` new filter values, under RLS in one reader
 * transaction each, written both ways (one per widget; shared scans): p50 in ms of each.
 */
async function bareSql(dashboard: ReturnType<typeof loadSampleDashboard>["dashboard"], timeZone: string, samples: number, nextFilter: () => Record<string, unknown>, rollups: readonly BuiltRollup[]) {
  const scope = { orgId: "org_acme" };
  const timed = async (statements: { text: string; values: unknown[] }[]) => {
    const t = performance.now();
    await withTenant(scope, async (tx) => {
      for (const s of statements) await tx.$queryRawUnsafe(s.text, ...s.values);
    }, { role: "reader", readOnly: true, timeZone, timeoutMs: 600_000, statementTimeoutMs: 600_000 });
    return performance.now() - t;
  };
  const perWidget: number[] = [];
  const shared: number[] = [];
  const onRollups: number[] = [];
  const answeredOnRollups: number[] = [];
  const answeredOnTables: number[] = [];
  const others: number[] = [];
  let answered = 0;
  let perWidgetCount = 0;
  let sharedCount = 0;
  let rollupCount = 0;
  for (let i = 0; i < samples; i++) {
    const filters = nextFilter();
    const clock = { now: new Date(), timeZone };
    const one = compileWarehouseStatements(dashboard, filters, clock);
    const scans = compileSharedWarehouseStatements(dashboard, filters, clock, scope);
    [perWidgetCount, sharedCount] = [one.length, scans.length];
    perWidget.push(await timed(one));
    shared.push(await timed(scans));
    if (rollups.length > 0) {
      const routed = compileSharedWarehouseStatements(dashboard, filters, clock, scope, rollups);
      rollupCount = routed.length;
      onRollups.push(await timed(routed));
      const answers = rollupAnsweredWidgets(dashboard, filters, clock, rollups);
      const rest = new Set(warehouseWidgetIds(dashboard).filter((id) => !answers.has(id)));
      answered = answers.size;
      answeredOnRollups.push(await timed(compileSharedWarehouseStatements(dashboard, filters, clock, scope, rollups, answers)));
      answeredOnTables.push(await timed(compileSharedWarehouseStatements(dashboard, filters, clock, scope, [], answers)));
      others.push(await timed(compileSharedWarehouseStatements(dashboard, filters, clock, scope, [], rest)));
    }
  }
  const p50 = (xs: number[]) => (xs.length > 0 ? pct(xs, 50) : undefined);
  return {
    perWidget: pct(perWidget, 50),
    perWidgetCount,
    shared: pct(shared, 50),
    sharedCount,
    rollup: p50(onRollups),
    rollupCount,
    answered,
    answeredOnRollups: p50(answeredOnRollups),
    answeredOnTables: p50(answeredOnTables),
    others: p50(others),
  };
}
