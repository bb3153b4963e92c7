// The compiled SQL of the sample dashboard's warehouse widgets for given filter values: what the
// engine runs, for benches to time as bare SQL beside it.
import fs from "node:fs";
import path from "node:path";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import type { ParsedDashboard } from "@/lib/manifest/schema";
import { compileSelection, selectDataset } from "@/lib/query/compile";
import { toPredicate, widgetConditions } from "@/lib/query/filters";
import { KPI_CATALOG } from "@/lib/query/kpi-catalog";
import { type BuiltRollup, routeSelection } from "@/lib/query/rollup-routing";
import { DEFAULT_ROW_CAP, planWidget, sharedScans } from "@/lib/query/run";

export function loadSampleDashboard(): { yaml: string; dashboard: ParsedDashboard } {
  const yaml = fs.readFileSync(path.join(import.meta.dirname, "..", "..", "docs", "manifests", "sample-dashboard.yaml"), "utf8");
  const parsed = parseDashboardYaml(yaml);
  if (!parsed.ok) throw new Error("the sample dashboard does not validate");
  return { yaml, dashboard: parsed.dashboard };
}

/** Widgets whose data is a warehouse dataset or KPI. */
export function warehouseWidgets(dashboard: ParsedDashboard) {
  return dashboard.widgets.filter((w) => w.spec.data?.kind === "dataset" || w.spec.data?.kind === "kpi");
}

export function compileWarehouseStatements(dashboard: ParsedDashboard, filterValues: Record<string, unknown>, clock: { now: Date; timeZone: string }) {
  return warehouseWidgets(dashboard).map((w) => compileWidget(dashboard, w, filterValues, clock, []));
}

/**
 * The statements the engine runs for the same widgets now: one per shared scan (lib/query/shared-scan.ts), one per
 * widget outside them; with `rollups`, each widget read from the rollup that answers it (lib/query/rollup-routing.ts).
 */
export function compileSharedWarehouseStatements(
  dashboard: ParsedDashboard,
  filterValues: Record<string, unknown>,
  clock: { now: Date; timeZone: string },
  scope: { orgId: string },
  rollups: readonly BuiltRollup[] = [],
  only?: ReadonlySet<string>,
) {
  const widgets = warehouseWidgets(dashboard).filter((w) => !only || only.has(w.metadata.id));
  const shared = sharedScans(widgets.map((w) => planWidget({ scope, dashboard, filterValues, ...clock, widgetId: w.metadata.id, rollups })), rollups);
  return [...shared.statements, ...widgets.filter((w) => !shared.shares(w.metadata.id)).map((w) => compileWidget(dashboard, w, filterValues, clock, rollups))];
}

/** The warehouse widgets one of `rollups` answers under these filter values. */
export function rollupAnsweredWidgets(dashboard: ParsedDashboard, filterValues: Record<string, unknown>, clock: { now: Date; timeZone: string }, rollups: readonly BuiltRollup[]): Set<string> {
  return new Set(warehouseWidgets(dashboard).filter((w) => routeSelection(widgetSelection(dashboard, w, filterValues, clock), rollups)).map((w) => w.metadata.id));
}

function compileWidget(
  dashboard: ParsedDashboard,
  w: ReturnType<typeof warehouseWidgets>[number],
  filterValues: Record<string, unknown>,
  clock: { now: Date; timeZone: string },
  rollups: readonly BuiltRollup[],
) {
  const selection = widgetSelection(dashboard, w, filterValues, clock);
  return compileSelection(routeSelection(selection, rollups)?.selection ?? selection);
}

function widgetSelection(dashboard: ParsedDashboard, w: ReturnType<typeof warehouseWidgets>[number], filterValues: Record<string, unknown>, clock: { now: Date; timeZone: string }) {
  const data = w.spec.data!;
  const dataset = data.kind === "kpi" ? KPI_CATALOG.get(data.kpi!)!.dataset : dashboard.datasets.get(data.dataset!)!;
  const fields = new Set([...dataset.dimensions.map((d) => d.id), ...dataset.metrics.map((m) => m.id)]);
  const filters = widgetConditions(dashboard.widgets, w, filterValues)
    .filter((c) => fields.has(c.field))
    .map((c) => ({ field: c.field, predicate: toPredicate(c, clock) }));
  return selectDataset(dataset, { columns: data.columns, filters, limit: DEFAULT_ROW_CAP + 1 });
}
