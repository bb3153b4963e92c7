// npm run bench -- dashboard-queries: the sample dashboard's widget queries through the engine
// (parse filters, compile, read-only tenant transaction, JSON rows, formulas) against the bare
// SQL time of the same compiled statements run back to back in one transaction.
import fs from "node:fs";
import path from "node:path";
import { closeDb } from "@/lib/db/client";
import { withTenant } from "@/lib/db/tenant";
import { parseDashboardYaml } from "@/lib/manifest/parse";
import { compileDataset } from "@/lib/query/compile";
import { toPredicate, widgetConditions } from "@/lib/query/filters";
import { KPI_CATALOG } from "@/lib/query/kpi-catalog";
import { DEFAULT_ROW_CAP, runWidgetQuery } from "@/lib/query/run";

const ROUNDS = 5;

export default async function bench(): Promise<void> {
  const file = path.join(import.meta.dirname, "..", "docs", "manifests", "sample-dashboard.yaml");
  const parsed = parseDashboardYaml(fs.readFileSync(file, "utf8"));
  if (!parsed.ok) throw new Error("the sample dashboard does not validate");
  const dashboard = parsed.dashboard;
  const scope = { orgId: "org_acme" };
  const now = new Date("2026-11-22T12:00:00Z");
  const timeZone = "America/New_York";
  const filterValues = {};
  // Widgets whose data is a warehouse dataset or KPI: the statements both sides run.
  const widgets = dashboard.widgets.filter((w) => w.spec.data?.kind === "dataset" || w.spec.data?.kind === "kpi");

  const statements = widgets.map((w) => {
    const data = w.spec.data!;
    const dataset = data.kind === "kpi" ? KPI_CATALOG.get(data.kpi!)!.dataset : dashboard.datasets.get(data.dataset!)!;
    const fields = new Set([...dataset.dimensions.map((d) => d.id), ...dataset.metrics.map((m) => m.id)]);
    const filters = widgetConditions(dashboard.widgets, w, filterValues)
      .filter((c) => fields.has(c.field))
      .map((c) => ({ field: c.field, predicate: toPredicate(c, { now, timeZone }) }));
    return compileDataset(dataset, { columns: data.columns, filters, limit: DEFAULT_ROW_CAP });
  });

  const engine = async () => {
    for (const w of widgets) await runWidgetQuery({ scope, dashboard, widgetId: w.metadata.id, filterValues, now, timeZone });
  };
  const bare = async () => {
    await withTenant(scope, async (tx) => {
      await tx.$queryRaw`SELECT set_config('TimeZone', ${timeZone}, true)`;
      for (const s of statements) await tx.$queryRawUnsafe(s.text, ...s.values);
    }, { role: "reader", readOnly: true });
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
