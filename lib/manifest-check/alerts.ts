import type { ManifestAlert } from "@/lib/manifest/alert";
import type { DashboardManifest, ParsedDashboard, WidgetManifest } from "@/lib/manifest/schema";
import type { ManifestPath } from "@/lib/manifest/source";
import { FilterValueError, filterUses, toPredicate, widgetConditions } from "@/lib/query/filters";
import { KPI_CATALOG, kpiColumns } from "@/lib/query/kpi-catalog";
import type { PlacedWidget } from "./references";

/** Components an alert may watch: those that show a figure or a series. */
const WATCHABLE = new Set(["kpi", "echarts", "table", "tabulator"]);

/** The alert's declaration as both a manifest's `alerts:` entry and the API's body carry it. */
type Declaration = Pick<ManifestAlert, "widget_id" | "column" | "per" | "min_volume" | "condition" | "filters" | "cadence">;

/**
 * What an alert's declaration must agree with in its dashboard (issue 45 §1), beyond its own schema: the widget
 * exists and shows data; the watched column, `per` and the volume column are among the widget's columns (where they
 * are known before it runs: a dataset's or KPI's fields, or the columns it names); charts and tables name the column
 * they watch; every filter named is a filter widget; a change has a date filter driving the widget, to know which
 * period came before. Paths are relative to the alert. Used by the manifest's checks (at line and column) and by the
 * alerts service for alerts made in the app, so both refuse the same things.
 */
export function alertProblems(dashboard: Pick<ParsedDashboard, "widgetsById" | "datasets">, alert: Declaration): { path: ManifestPath; message: string }[] {
  const problems: { path: ManifestPath; message: string }[] = [];
  const widget = dashboard.widgetsById.get(alert.widget_id);
  if (!widget) return [{ path: ["widget_id"], message: `no widget has id '${alert.widget_id}'` }];
  const data = widget.spec.data;
  if (!data || !WATCHABLE.has(widget.spec.component)) {
    return [{ path: ["widget_id"], message: `widget '${alert.widget_id}' shows no figure to watch (alerts watch KPIs, charts and tables)` }];
  }
  const columns = knownColumns(dashboard, data);
  const checkColumn = (path: ManifestPath, column: string | undefined, what: string) => {
    if (column !== undefined && columns && !columns.has(column)) {
      problems.push({ path, message: `'${column}' is not a column of widget '${alert.widget_id}' (${[...columns].join(", ")}); ${what}` });
    }
  };
  if (widget.spec.component !== "kpi" && alert.column === undefined) {
    problems.push({ path: ["column"], message: `name the column to watch: widget '${alert.widget_id}' is a ${widget.spec.component}, which shows several` });
  }
  checkColumn(["column"], alert.column, "the column watched must be one the widget shows");
  checkColumn(["per"], alert.per, "`per` names one of the widget's dimension columns");
  if (alert.per !== undefined && alert.per === alert.column) problems.push({ path: ["per"], message: "`per` must be another column than the one watched" });
  checkColumn(["min_volume", "column"], alert.min_volume?.column, "the volume column must be one the widget shows");

  const filterIds = new Set([...dashboard.widgetsById.values()].filter((w) => w.spec.component === "filter").map((w) => w.metadata.id));
  for (const id of Object.keys(alert.filters ?? {})) {
    if (!filterIds.has(id)) problems.push({ path: ["filters", id], message: `'${id}' is not a filter widget of this dashboard` });
  }
  if (alert.condition.kind === "change" && !filterUses(dashboard.widgetsById.values(), widget).some((use) => use.operator === "date")) {
    problems.push({ path: ["condition"], message: `a change needs a date filter driving widget '${alert.widget_id}', to know which period came before` });
  }
  if (alert.cadence.kind === "cron" && alert.cadence.cron.trim().split(/\s+/).length !== 5) {
    problems.push({ path: ["cadence", "cron"], message: "a cron expression has five fields (minute hour day-of-month month day-of-week)" });
  }
  return problems;
}

/**
 * Filter values as the viewer checks them: each value given for a filter is turned into the predicate of every widget
 * it drives, so a value the viewer would refuse (a malformed date, a list where one value goes) is refused here too,
 * once per filter. The one check behind report schedules' and alerts' `filters` (API and manifest alike).
 */
export function filterValueProblems(
  widgets: readonly WidgetManifest[],
  filters: Readonly<Record<string, unknown>>,
  context: { timeZone: string; now: Date },
): { filterId: string; reason: string }[] {
  const problems: { filterId: string; reason: string }[] = [];
  const bad = new Set<string>();
  for (const widget of widgets) {
    for (const condition of widgetConditions(widgets, widget, filters)) {
      if (!Object.hasOwn(filters, condition.source) || bad.has(condition.source)) continue;
      try {
        toPredicate(condition, context);
      } catch (error) {
        if (!(error instanceof FilterValueError)) throw error;
        bad.add(condition.source);
        problems.push({ filterId: condition.source, reason: error.reason });
      }
    }
  }
  return problems;
}

/** A widget's columns when they are known before it runs; null for a widget whose columns only running it tells. */
function knownColumns(dashboard: Pick<ParsedDashboard, "datasets">, data: NonNullable<WidgetManifest["spec"]["data"]>): ReadonlySet<string> | null {
  if (data.columns && data.columns.length > 0) return new Set(data.columns);
  if (data.kind === "dataset") {
    const dataset = dashboard.datasets.get(data.dataset ?? "");
    if (!dataset) return null;
    const kpi = dataset.kpi !== undefined ? KPI_CATALOG.get(dataset.kpi) : undefined;
    return new Set([...(kpi ? kpiColumns(kpi) : []), ...dataset.dimensions.map((d) => d.id), ...dataset.metrics.map((m) => m.id)]);
  }
  if (data.kind === "kpi") {
    const kpi = KPI_CATALOG.get(data.kpi ?? "");
    return kpi ? new Set(kpiColumns(kpi)) : null;
  }
  return null;
}

/** The alerts under a dashboard manifest's `spec.alerts`: ids unique, each agreeing with its dashboard (alertProblems). */
export function checkManifestAlerts(dashboard: DashboardManifest, widgets: readonly PlacedWidget[], report: (document: number, path: ManifestPath, message: string) => void) {
  const parsed = {
    widgetsById: new Map(widgets.map((w) => [w.manifest.metadata.id, w.manifest])),
    datasets: new Map(dashboard.spec.datasets.map((d) => [d.id, d])),
  };
  const seen = new Set<string>();
  // A manifest names no organization: values are checked in UTC now (whether a value parses does not depend on the
  // zone); the app's check of an alert made on screen uses the organization's zone (lib/alerts).
  const context = { timeZone: "UTC", now: new Date() };
  dashboard.spec.alerts?.forEach((alert, i) => {
    const path = ["spec", "alerts", i];
    if (seen.has(alert.id)) report(0, [...path, "id"], `duplicate alert id '${alert.id}'`);
    seen.add(alert.id);
    const problems = alertProblems(parsed, alert);
    for (const problem of problems) report(0, [...path, ...problem.path], problem.message);
    // Values of filters that are not the dashboard's were reported above; the others are checked as the viewer would.
    if (problems.some((p) => p.path[0] === "filters")) return;
    for (const problem of filterValueProblems([...parsed.widgetsById.values()], alert.filters, context)) {
      report(0, [...path, "filters", problem.filterId], `filter '${problem.filterId}': ${problem.reason}`);
    }
  });
}
