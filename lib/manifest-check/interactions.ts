import { SAMPLE_ORDER_COLUMNS } from "@/lib/query/demo";
import { KPI_CATALOG, kpiColumns } from "@/lib/query/kpi-catalog";
import type { DashboardManifest, Dataset, FilterOperator, WidgetManifest } from "@/lib/manifest/schema";
import type { ManifestPath } from "@/lib/manifest/source";
import type { PlacedWidget } from "./references";

/**
 * Chart clicks (`spec.on_click`, issue 27): what a clicked point's fields are (their types), what
 * a filter accepts, and how a clicked value becomes that filter's value. Used by the manifest
 * validator (a clicked column whose type the target filter cannot take is an error, the Metabase
 * #14473 class), by the pages (which send the types to the browser, since anonymous viewers get
 * no dataset definitions) and by the viewer when a point is clicked. Browser-safe.
 */

export type ValueKind = "text" | "number" | "boolean" | "date";
/** A date column that holds periods, not days: a click on "2026-03" means the whole month. */
export type DateBucket = "day" | "week" | "month" | "quarter" | "year";
export interface FieldType {
  kind: ValueKind;
  bucket?: DateBucket;
}

/** What a filter widget takes, read from its control, its options and the operators that read it. */
export interface FilterTarget {
  /** Value kinds it can use; null when nothing tells (any scalar is passed as is). */
  kinds: ValueKind[] | null;
  /** Its value is a date expression (date controls, `date` operator). */
  date: boolean;
  /** Its value is a list (`in`, a multiple select). */
  multiple: boolean;
  /** Numbers are read as a closed range (`between`). */
  between: boolean;
  /** For messages and chips. */
  label: string;
}

/** Everything a viewer needs to act on a click, computed on the server for the dashboard shown. */
export interface ClickContext {
  /** This dashboard's slug: a drill-through to it changes the page in place. */
  slug: string;
  /** Widget id -> clicked field -> its type (null: unknown). */
  fieldTypes: Record<string, Record<string, FieldType | null>>;
  /** This dashboard's filters. */
  filters: Record<string, FilterTarget>;
  /** Drill-through dashboards by slug: their filters and tabs, or null when the viewer may not open it from here. */
  drills: Record<string, { filters: Record<string, FilterTarget>; tabs: string[] } | null>;
}

function describeType(type: FieldType): string {
  if (type.kind === "date") return type.bucket && type.bucket !== "day" ? `a ${type.bucket} (date bucket)` : "a date";
  return type.kind === "text" ? "text" : `a ${type.kind}`;
}

// ---------------------------------------------------------------- field types

const BUCKETS: readonly DateBucket[] = ["day", "week", "month", "quarter", "year"];

/**
 * The type of a dimension's SQL expression where its form says it: date_trunc('<unit>', …)
 * (also inside to_char) is a date bucket, a ::date cast or a column named *_date/*_day a date,
 * extract/count/length a number, other to_char text. A plain column of unknown type is null.
 */
export function expressionType(expression: string): FieldType | null {
  const text = expression.trim().toLowerCase();
  const trunc = /date_trunc\(\s*'(\w+)'/.exec(text);
  if (trunc && (BUCKETS as readonly string[]).includes(trunc[1])) return { kind: "date", bucket: trunc[1] as DateBucket };
  if (/::\s*date\b/.test(text) || /^[\w.]*(?:_date|\.date|_day)$/.test(text)) return { kind: "date", bucket: "day" };
  if (/^(?:extract|date_part|count|length|char_length)\s*\(/.test(text)) return { kind: "number" };
  if (/^to_char\s*\(/.test(text)) return { kind: "text" };
  return null;
}

/** The type shared by sample values (static rows, filter options); null when they disagree or are absent. */
function valuesType(values: readonly unknown[]): FieldType | null {
  let found: FieldType | null = null;
  for (const value of values) {
    if (value === null || value === undefined) continue;
    const type: FieldType =
      typeof value === "number" ? { kind: "number" } : typeof value === "boolean" ? { kind: "boolean" } : typeof value === "string" ? stringType(value) : { kind: "text" };
    if (found && (found.kind !== type.kind || found.bucket !== type.bucket)) return null;
    found = type;
  }
  return found;
}

function stringType(value: string): FieldType {
  if (/^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/.test(value)) return { kind: "date", bucket: "day" };
  if (/^\d{4}-\d{2}$/.test(value)) return { kind: "date", bucket: "month" };
  if (/^\d{4}-Q[1-4]$/i.test(value)) return { kind: "date", bucket: "quarter" };
  return { kind: "text" };
}

const DEMO_TYPES: Record<string, FieldType> = {
  order_date: { kind: "date", bucket: "day" },
  quantity: { kind: "number" },
  revenue: { kind: "number" },
  cost: { kind: "number" },
};

/** A dataset's columns with their types: metrics are numbers, dimensions typed by expressionType. */
function datasetTypes(dataset: Dataset): Map<string, FieldType | null> {
  const types = new Map<string, FieldType | null>();
  const kpi = dataset.kpi !== undefined ? KPI_CATALOG.get(dataset.kpi) : undefined;
  if (kpi) {
    for (const d of kpi.dataset.dimensions) types.set(d.id, expressionType(d.column));
    for (const m of kpi.dataset.metrics) types.set(m.id, { kind: "number" });
  }
  for (const d of dataset.dimensions) types.set(d.id, d.column.startsWith("sample_orders.") ? (DEMO_TYPES[d.column.slice(14)] ?? { kind: "text" }) : expressionType(d.column));
  for (const m of dataset.metrics) types.set(m.id, { kind: "number" });
  return types;
}

/** The columns a widget's data gives, with their types; null when they are known only once it runs (sql). */
function widgetFieldTypes(widget: WidgetManifest, datasets: ReadonlyMap<string, Dataset>): Map<string, FieldType | null> | null {
  const data = widget.spec.data;
  if (!data) return new Map();
  let all: Map<string, FieldType | null>;
  switch (data.kind) {
    case "sql":
      return null;
    case "dataset": {
      const dataset = data.dataset === undefined ? undefined : datasets.get(data.dataset);
      if (!dataset) return null;
      all = datasetTypes(dataset);
      break;
    }
    case "kpi": {
      const kpi = data.kpi === undefined ? undefined : KPI_CATALOG.get(data.kpi);
      if (!kpi) return null;
      all = new Map(kpiColumns(kpi).map((c) => [c, null]));
      break;
    }
    case "static": {
      const rows = data.rows ?? [];
      all = new Map([...new Set(rows.flatMap((r) => Object.keys(r)))].map((c) => [c, valuesType(rows.map((r) => r[c]))]));
      break;
    }
    case "demo":
      all = new Map(SAMPLE_ORDER_COLUMNS.map((c) => [c, DEMO_TYPES[c] ?? { kind: "text" }]));
      break;
  }
  return data.columns ? new Map(data.columns.filter((c) => all.has(c)).map((c) => [c, all.get(c) ?? null])) : all;
}

// ---------------------------------------------------------------- filters

const DATE_CONTROLS: ReadonlySet<string> = new Set(["date", "date_range", "calendar"]);
const ORDERED: ReadonlySet<FilterOperator> = new Set(["gt", "lt", "gte", "lte", "between"]);

/** What `filter` accepts, from its control, options and every operator that reads it in `widgets`. */
function filterTarget(filter: WidgetManifest, widgets: readonly WidgetManifest[], datasets: ReadonlyMap<string, Dataset>): FilterTarget {
  const display = filter.spec.display.filter;
  const label = display?.label ?? filter.metadata.name;
  const operators = new Set<FilterOperator>(filter.spec.bindings.map((b) => b.operator));
  for (const w of widgets) for (const use of w.spec.filters) if (use.filter_id === filter.metadata.id) operators.add(use.operator);
  const date = (display !== undefined && DATE_CONTROLS.has(display.control)) || operators.has("date");
  const multiple = display?.multiple === true || operators.has("in");
  const between = operators.has("between");
  if (date) return { kinds: ["date"], date, multiple: false, between: false, label };
  if ([...operators].some((op) => ORDERED.has(op))) return { kinds: ["number", "date"], date, multiple, between, label };
  // A select's options say what it holds: inline values, or the column its data maps to `value`.
  let options: FieldType | null = null;
  if (display?.options) options = valuesType(display.options.map((o) => (o !== null && typeof o === "object" ? o.value : o)));
  else if (filter.spec.data) {
    const mapped = filter.spec.data.mappings?.value;
    const column = typeof mapped === "string" ? mapped : undefined;
    options = column ? (widgetFieldTypes(filter, datasets)?.get(column) ?? null) : null;
  }
  // Metabase #14473: a date clicked into a text or number select matches nothing; only a select of dates takes one.
  return { kinds: options ? [options.kind] : ["text", "number", "boolean"], date, multiple, between, label };
}

/** Every filter of a dashboard with what it accepts. */
export function filterTargets(widgets: readonly WidgetManifest[], datasets: ReadonlyMap<string, Dataset>): Record<string, FilterTarget> {
  return Object.fromEntries(widgets.filter((w) => w.spec.component === "filter").map((w) => [w.metadata.id, filterTarget(w, widgets, datasets)]));
}

/**
 * The click context a dashboard's own manifest gives: its fields' types, its filters, and itself as
 * a drill-through target; other dashboards are left closed (null) for the caller to open.
 */
export function ownClickContext(widgets: readonly WidgetManifest[], datasets: ReadonlyMap<string, Dataset>, tabs: readonly string[], slug: string): ClickContext {
  const fieldTypes: ClickContext["fieldTypes"] = {};
  for (const widget of widgets) {
    if (widget.spec.on_click) fieldTypes[widget.metadata.id] = Object.fromEntries(widgetFieldTypes(widget, datasets) ?? []);
  }
  const filters = filterTargets(widgets, datasets);
  const drills: ClickContext["drills"] = Object.fromEntries(drillSlugs(widgets).map((target) => [target, target === slug ? { filters, tabs: [...tabs] } : null]));
  return { slug, fieldTypes, filters, drills };
}

/** Why a clicked field of `type` cannot set `target`, or null when it can (or nothing tells). */
function typeMismatch(type: FieldType | null, target: FilterTarget): string | null {
  if (!type || !target.kinds || target.kinds.includes(type.kind)) return null;
  const takes = target.date ? "date expressions" : target.kinds.map((k) => (k === "text" ? "text" : `${k}s`)).join(" or ");
  return `it is ${describeType(type)} and filter '${target.label}' takes ${takes}`;
}

// ---------------------------------------------------------------- clicked value -> filter value

const pad = (n: number) => String(n).padStart(2, "0");
const iso = (y: number, m: number, d: number) => `${y}-${pad(m)}-${pad(d)}`;
const lastDay = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate();

/** The period a date bucket starting at (y, m, d) covers, as a date expression the filters read. */
function periodExpression(y: number, m: number, d: number, bucket: DateBucket): string {
  switch (bucket) {
    case "day":
      return iso(y, m, d);
    case "week": {
      const end = new Date(Date.UTC(y, m - 1, d + 6));
      return `${iso(y, m, d)} to ${iso(end.getUTCFullYear(), end.getUTCMonth() + 1, end.getUTCDate())}`;
    }
    case "month":
      return `${iso(y, m, 1)} to ${iso(y, m, lastDay(y, m))}`;
    case "quarter": {
      const first = Math.floor((m - 1) / 3) * 3 + 1;
      return `${iso(y, first, 1)} to ${iso(y, first + 2, lastDay(y, first + 2))}`;
    }
    case "year":
      return `${iso(y, 1, 1)} to ${iso(y, 12, 31)}`;
  }
}

/**
 * A clicked date as a date filter value: a day is that day; a bucket (declared by its column, or
 * read from the value's form: 2026-03 a month, 2026-Q1 a quarter, 2026 a year) is the whole
 * period, so clicking March sets "2026-03-01 to 2026-03-31", not March 1st.
 */
export function dateExpressionFor(value: unknown, bucket: DateBucket | undefined): string | null {
  const text = typeof value === "number" && Number.isInteger(value) ? String(value) : typeof value === "string" ? value.trim() : null;
  if (text === null) return null;
  let match = /^(\d{4})-(\d{2})-(\d{2})/.exec(text);
  if (match) return periodExpression(Number(match[1]), Number(match[2]), Number(match[3]), bucket ?? "day");
  if ((match = /^(\d{4})-(\d{2})$/.exec(text))) return periodExpression(Number(match[1]), Number(match[2]), 1, bucket === "quarter" || bucket === "year" ? bucket : "month");
  if ((match = /^(\d{4})-?Q([1-4])$/i.exec(text))) return periodExpression(Number(match[1]), (Number(match[2]) - 1) * 3 + 1, 1, "quarter");
  if ((match = /^(\d{4})$/.exec(text))) return periodExpression(Number(match[1]), 1, 1, "year");
  return null;
}

export type ClickValue = { ok: true; value: unknown; text: string } | { ok: false; reason: string };

/** The value `target` is set to when a point whose field holds `value` is clicked; `text` is what a chip shows. */
export function clickFilterValue(value: unknown, type: FieldType | null, target: FilterTarget): ClickValue {
  if (value === null || value === undefined) return { ok: false, reason: "the clicked point has no value for it" };
  if (typeof value === "object") return { ok: false, reason: "the clicked value is not a single value" };
  const mismatch = typeMismatch(type, target);
  if (mismatch) return { ok: false, reason: mismatch };
  if (target.date) {
    const expression = dateExpressionFor(value, type?.kind === "date" ? type.bucket : undefined);
    return expression ? { ok: true, value: expression, text: expression } : { ok: false, reason: `"${String(value)}" is not a date` };
  }
  if (target.between && typeof value === "number") return { ok: true, value: [value, value], text: String(value) };
  return { ok: true, value: target.multiple ? [value] : value, text: String(value) };
}

// ---------------------------------------------------------------- validation

type Report = (document: number, path: ManifestPath, message: string) => void;

/** A drill-through target the validator knows: its widgets, datasets and tabs. */
export interface DrillTargetManifest {
  widgets: readonly WidgetManifest[];
  datasets: ReadonlyMap<string, Dataset>;
  tabs: readonly string[];
}

/**
 * Checks every `on_click`: charts only; each field among the widget's columns; each filter a
 * filter widget of the dashboard it sets, able to take the field's type; a url's placeholders
 * name columns; a drill's tab exists. `drillTargets` (the server's, at save) maps the slugs of
 * other dashboards to their manifests, or null when the organization has no such dashboard; a
 * slug it leaves out (the browser's editor knows none) is not checked.
 */
export function checkInteractions(
  dashboard: DashboardManifest,
  widgets: readonly PlacedWidget[],
  report: Report,
  drillTargets?: ReadonlyMap<string, DrillTargetManifest | null>,
): void {
  const datasets = new Map(dashboard.spec.datasets.map((d) => [d.id, d]));
  const manifests = widgets.map((w) => w.manifest);
  const self: DrillTargetManifest = { widgets: manifests, datasets, tabs: dashboard.spec.tabs.map((t) => t.id) };
  for (const { manifest, document, path } of widgets) {
    const click = manifest.spec.on_click;
    if (!click) continue;
    const at = (...rest: (string | number)[]) => [...path, "spec", "on_click", ...rest];
    if (manifest.spec.component !== "echarts") {
      report(document, at(), `on_click applies to charts (component echarts), not ${manifest.spec.component}`);
      continue;
    }
    const types = widgetFieldTypes(manifest, datasets);
    const fieldType = (field: string, fieldPath: ManifestPath): FieldType | null | false => {
      if (types === null) return null;
      if (!types.has(field)) {
        report(document, fieldPath, `'${field}' is not among the widget's columns (${[...types.keys()].join(", ") || "none"}); add it to data.columns`);
        return false;
      }
      return types.get(field) ?? null;
    };
    const checkFilters = (entries: readonly { filter: string; field: string }[], target: DrillTargetManifest, where: string, key: string) => {
      entries.forEach((entry, i) => {
        const filter = target.widgets.find((w) => w.metadata.id === entry.filter);
        if (!filter || filter.spec.component !== "filter") {
          report(document, at(...key.split("."), i, "filter"), `${where} has no filter widget '${entry.filter}'`);
          return;
        }
        const type = fieldType(entry.field, at(...key.split("."), i, "field"));
        if (type === false) return;
        const mismatch = typeMismatch(type, filterTarget(filter, target.widgets, target.datasets));
        if (mismatch) report(document, at(...key.split("."), i, "field"), `'${entry.field}' cannot set filter '${entry.filter}': ${mismatch}`);
      });
    };
    if (click.set_filters) checkFilters(click.set_filters, self, "this dashboard", "set_filters");
    const drill = click.drill_through;
    if (!drill) continue;
    if (drill.url !== undefined) {
      for (const placeholder of drill.url.matchAll(/\{([^{}]*)\}/g)) fieldType(placeholder[1], at("drill_through", "url"));
      continue;
    }
    let target: DrillTargetManifest | null | undefined = self;
    if (drill.dashboard !== undefined) {
      target = drillTargets?.get(drill.dashboard);
      if (target === null) {
        report(document, at("drill_through", "dashboard"), `no dashboard has slug '${drill.dashboard}' in this organization`);
        continue;
      }
    }
    if (!target) continue;
    if (drill.tab !== undefined && !target.tabs.includes(drill.tab)) report(document, at("drill_through", "tab"), `the target dashboard has no tab '${drill.tab}'; its tabs: ${target.tabs.join(", ") || "none"}`);
    checkFilters(drill.filters, target, drill.dashboard ? `dashboard '${drill.dashboard}'` : "this dashboard", "drill_through.filters");
  }
}

/** Slugs of the other dashboards a manifest's clicks open. */
export function drillSlugs(widgets: readonly WidgetManifest[]): string[] {
  return [...new Set(widgets.flatMap((w) => (w.spec.on_click?.drill_through?.dashboard ? [w.spec.on_click.drill_through.dashboard] : [])))];
}
