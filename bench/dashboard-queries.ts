// npm run bench -- dashboard-queries: the sample dashboard's widget queries through the engine
// (parse filters, compile, read-only tenant transaction, JSON rows, formulas) against the bare
// SQL time of the same compiled statements run back to back in one transaction.
import { closeDb } from "@/lib/db/client";
import { withTenant } from "@/lib/db/tenant";
import { runWidgetQuery } from "@/lib/query/run";
import { compileWarehouseStatements, loadSampleDashboard, warehouseWidgets } from "./lib/sample-statements";

const ROUNDS = 5;

export default async function bench(): Promise<void> {
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
