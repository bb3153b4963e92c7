// npm run bench -- dashboard-queries [--engine pglite|postgres|both]: the sample dashboard's widget
// queries through the engine as the dashboard endpoint runs them (parse filters, compile, one
// read-only tenant transaction for the request under row-level security, JSON rows, formulas), and
// each widget in its own transaction as a single-widget request does, against hand-written SQL WITHOUT row-level security: the same
// statements run by the owner, each table narrowed by a literal `org_id = 'org_acme'`. So the
// ratio includes what the RLS policies cost. On PGlite, and on PostgreSQL too when
// QUARRY_TEST_DATABASE_URL is set (both in one run).
//
// npm run bench -- dashboard-queries --scale 1,10[,100] [--engine pglite|postgres]: how cost grows. A fresh
// database with the demo seed, its orders copied N times over the same two years (N× as many orders per
// day), engine time per widget at each scale, on PGlite and on PostgreSQL (QUARRY_TEST_DATABASE_URL).
import type { Database } from "@/lib/db/client";
import { seedDemo } from "@/lib/demo/seed";
import { withTenant } from "@/lib/db/tenant";
import { runReadOnlyBatch } from "@/lib/query/execute";
import { runWidgetQuery } from "@/lib/query/run";
import { compileWarehouseStatements, loadSampleDashboard, warehouseWidgets } from "./lib/sample-statements";
import { benchEngines, withScratchDb } from "./lib/scratch-db";
import { withSeededDb } from "./lib/seeded-db";

const ROUNDS = 5;
const ORG = "org_acme";
const TENANT_TABLES = ["orders", "locations", "products", "sales_targets"];

/** The statement with each tenant table replaced by the organization's rows (inlined CTEs), for a role that bypasses RLS. */
function withoutRls(text: string): string {
  const ctes = TENANT_TABLES.map((t) => `${t} AS NOT MATERIALIZED (SELECT * FROM public.${t} WHERE org_id = '${ORG}')`).join(", ");
  return `WITH ${ctes} ${text}`;
}

export default async function bench(args: string[]): Promise<void> {
  const scaleAt = args.indexOf("--scale");
  if (scaleAt >= 0) {
    const scales = (args[scaleAt + 1] ?? "1,10").split(",").map(Number);
    if (scales.some((n) => !Number.isInteger(n) || n < 1)) throw new Error("--scale takes whole numbers >= 1, e.g. 1,10,100");
    for (const engine of benchEngines(args)) await withScratchDb("dashboard-scale", (db) => growth(db, scales), engine);
    return;
  }
  for (const engine of benchEngines(args)) await withSeededDb(engine, () => run(engine));
}

async function run(engine: string) {
  const { dashboard } = loadSampleDashboard();
  const scope = { orgId: ORG };
  const now = new Date("2026-11-22T12:00:00Z");
  const timeZone = "America/New_York";
  const filterValues = {};
  const widgets = warehouseWidgets(dashboard);
  const statements = compileWarehouseStatements(dashboard, filterValues, { now, timeZone });
  const { prisma } = await (await import("@/lib/db/client")).getDb();

  const engineRun = () =>
    runReadOnlyBatch(scope, widgets, { timeZone, transactionTimeoutMs: 30_000 }, async (w, runner) => {
      await runWidgetQuery({ scope, dashboard, widgetId: w.metadata.id, filterValues, now, timeZone, runner });
    });
  const enginePerWidget = async () => {
    for (const w of widgets) await runWidgetQuery({ scope, dashboard, widgetId: w.metadata.id, filterValues, now, timeZone });
  };
  const handWritten = async () => {
    await prisma.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(`SET LOCAL TimeZone = '${timeZone}'`);
      for (const s of statements) await tx.$queryRawUnsafe(withoutRls(s.text), ...s.values);
    });
  };
  const underRls = async () => {
    await withTenant(scope, async (tx) => {
      for (const s of statements) await tx.$queryRawUnsafe(s.text, ...s.values);
    }, { role: "reader", readOnly: true, timeZone });
  };

  // Same answers: the hand-written baseline must compute what the engine computes.
  const a = await prisma.$transaction(async (tx) => {
    await tx.$executeRawUnsafe(`SET LOCAL TimeZone = '${timeZone}'`);
    return Promise.all(statements.slice(0, 3).map((s) => tx.$queryRawUnsafe(withoutRls(s.text), ...s.values)));
  });
  const b = await withTenant(scope, (tx) => Promise.all(statements.slice(0, 3).map((s) => tx.$queryRawUnsafe(s.text, ...s.values))), { role: "reader", readOnly: true, timeZone });
  if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error("hand-written SQL and the RLS statements disagree");

  await engineRun();
  await enginePerWidget();
  await handWritten();
  await underRls();
  const times = { engine: [] as number[], perWidget: [] as number[], hand: [] as number[], rls: [] as number[] };
  for (let i = 0; i < ROUNDS; i++) {
    let start = performance.now();
    await handWritten();
    times.hand.push(performance.now() - start);
    start = performance.now();
    await underRls();
    times.rls.push(performance.now() - start);
    start = performance.now();
    await engineRun();
    times.engine.push(performance.now() - start);
    start = performance.now();
    await enginePerWidget();
    times.perWidget.push(performance.now() - start);
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const [e, w, h, r] = [median(times.engine), median(times.perWidget), median(times.hand), median(times.rls)];
  console.log(`\n[${engine}] dashboard: ${dashboard.manifest.metadata.id}, ${widgets.length} warehouse widgets, default filters, median of ${ROUNDS} rounds`);
  console.log(`hand-written SQL, owner, literal org_id, no RLS : ${h.toFixed(1)} ms`);
  console.log(`same statements under RLS, one transaction      : ${r.toFixed(1)} ms (${(r / h).toFixed(2)}x)`);
  console.log(`engine, one transaction (the dashboard endpoint): ${e.toFixed(1)} ms`);
  console.log(`engine, one transaction per widget              : ${w.toFixed(1)} ms (${(w / h).toFixed(2)}x)`);
  console.log(`ratio engine/hand-written: ${(e / h).toFixed(2)}x (aim <= 1.2x)`);
}

/** Orders copied beyond the demo's get ids from here on (the demo's are below 3e9). */
const COPY_ID_BASE = 10_000_000_000;
const SCALE_ROUNDS = 3;

async function growth(db: Database, scales: number[]): Promise<void> {
  if (db.kind === "pglite") await seedDemo(db.system);
  else {
    await seedDemo(db.system);
    const acme = await db.system.query("SELECT 1 FROM organizations WHERE id = 'org_acme'");
    if (acme.length === 0) throw new Error("the PostgreSQL database has organizations but not the demo seed: use an empty database");
  }
  await db.system.query("DELETE FROM orders WHERE id >= $1", [COPY_ID_BASE]);
  const [{ demo }] = await db.system.query<{ demo: number }>("SELECT count(*)::int AS demo FROM orders");
  const { dashboard } = loadSampleDashboard();
  const widgets = warehouseWidgets(dashboard);
  const scope = { orgId: "org_acme" };
  const now = new Date("2026-11-22T12:00:00Z");
  const timeZone = "America/New_York";
  const engineName = db.kind === "pglite" ? "PGlite" : "PostgreSQL";
  console.log(`\n== ${engineName}: ${dashboard.manifest.metadata.id}, ${widgets.length} warehouse widgets, default filters, engine time per widget (median of ${SCALE_ROUNDS})`);
  const results = new Map<string, number[]>();
  let copies = 1;
  try {
    for (const scale of scales) {
      const started = performance.now();
      for (; copies < scale; copies++) {
        await db.system.query(
          `INSERT INTO orders (id, org_id, order_date, location_id, product_id, channel, customer_id, quantity, amount, cost)
           SELECT id + $1::bigint * $2::bigint, org_id, order_date, location_id, product_id, channel, customer_id, quantity, amount, cost FROM orders WHERE id < $2::bigint`,
          [copies, COPY_ID_BASE],
        );
      }
      await db.system.exec("ANALYZE orders");
      const loadMs = performance.now() - started;
      for (const w of widgets) {
        const run = () => runWidgetQuery({ scope, dashboard, widgetId: w.metadata.id, filterValues: {}, now, timeZone });
        await run();
        const ms: number[] = [];
        for (let i = 0; i < SCALE_ROUNDS; i++) {
          const t = performance.now();
          await run();
          ms.push(performance.now() - t);
        }
        const list = results.get(w.metadata.id) ?? [];
        list.push(ms.sort((a, b) => a - b)[Math.floor(ms.length / 2)]);
        results.set(w.metadata.id, list);
      }
      console.log(`  ${scale}x: ${(demo * scale).toLocaleString("en-US")} orders (load ${(loadMs / 1000).toFixed(1)} s)`);
    }
    const header = scales.map((n) => `${n}x`.padStart(10)).join("") + scales.slice(1).map((n) => `  ${n}x/1x`).join("");
    console.log(`  ${"widget".padEnd(28)}${header}   (ms; a ratio near the scale is linear)`);
    for (const [id, list] of results) {
      console.log(`  ${id.padEnd(28)}${list.map((ms) => ms.toFixed(1).padStart(10)).join("")}${list.slice(1).map((ms, i) => `x${(ms / list[0]).toFixed(1)}`.padStart(8 + String(scales[i + 1]).length)).join("")}`);
    }
    const totals = scales.map((_, i) => [...results.values()].reduce((sum, list) => sum + list[i], 0));
    console.log(`  ${"all widgets".padEnd(28)}${totals.map((ms) => ms.toFixed(1).padStart(10)).join("")}${totals.slice(1).map((ms, i) => `x${(ms / totals[0]).toFixed(1)}`.padStart(8 + String(scales[i + 1]).length)).join("")}`);
  } finally {
    if (db.kind === "postgres") await db.system.query("DELETE FROM orders WHERE id >= $1", [COPY_ID_BASE]);
  }
}
