// npm run bench -- dashboard-queries: the sample dashboard's widget queries through the engine
// (parse filters, compile, read-only tenant transaction, JSON rows, formulas) against the bare
// SQL time of the same compiled statements run back to back in one transaction.
//
// npm run bench -- dashboard-queries --scale 1,10[,100] [--engine pglite|postgres]: how cost grows. A fresh
// database with the demo seed, its orders copied N times over the same two years (N× as many orders per
// day), engine time per widget at each scale, on PGlite and on PostgreSQL (QUARRY_TEST_DATABASE_URL).
import { closeDb, type Database } from "@/lib/db/client";
import { seedDemo } from "@/lib/db/seed";
import { withTenant } from "@/lib/db/tenant";
import { runWidgetQuery } from "@/lib/query/run";
import { benchEngines, withScratchDb } from "./lib/scratch-db";
import { compileWarehouseStatements, loadSampleDashboard, warehouseWidgets } from "./lib/sample-statements";

const ROUNDS = 5;

export default async function bench(args: string[]): Promise<void> {
  const scaleAt = args.indexOf("--scale");
  if (scaleAt >= 0) {
    const scales = (args[scaleAt + 1] ?? "1,10").split(",").map(Number);
    if (scales.some((n) => !Number.isInteger(n) || n < 1)) throw new Error("--scale takes whole numbers >= 1, e.g. 1,10,100");
    for (const engine of benchEngines(args)) await withScratchDb("dashboard-scale", (db) => growth(db, scales), engine);
    return;
  }
  const { dashboard } = loadSampleDashboard();
  const scope = { orgId: "org_acme" };
  const now = new Date("2026-11-22T12:00:00Z");
  const timeZone = "America/New_York";
  const filterValues = {};
  const widgets = warehouseWidgets(dashboard);
  const statements = compileWarehouseStatements(dashboard, filterValues, { now, timeZone });

  const engine = async () => {
    for (const w of widgets) await runWidgetQuery({ scope, dashboard, widgetId: w.metadata.id, filterValues, now, timeZone });
  };
  const bare = async () => {
    await withTenant(scope, async (tx) => {
      for (const s of statements) await tx.$queryRawUnsafe(s.text, ...s.values);
    }, { role: "reader", readOnly: true, timeZone });
  };

  await engine();
  await bare();
  const engineMs: number[] = [];
  const bareMs: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    let start = performance.now();
    await bare();
    bareMs.push(performance.now() - start);
    start = performance.now();
    await engine();
    engineMs.push(performance.now() - start);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const e = median(engineMs);
  const b = median(bareMs);
  console.log(`dashboard: ${dashboard.manifest.metadata.id}, ${widgets.length} warehouse widgets, default filters, median of ${ROUNDS} rounds`);
  console.log(`bare SQL (same statements, one transaction): ${b.toFixed(1)} ms`);
  console.log(`engine (compile + run per widget)         : ${e.toFixed(1)} ms`);
  console.log(`ratio engine/bare: ${(e / b).toFixed(2)}x (aim <= 1.2x)`);
  await closeDb();
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
