import type { CatalogTable } from "@/lib/manifest-check/table-names";
import type { Component, Dataset, WidgetManifest } from "@/lib/manifest/schema";
import type { ValueFormatType } from "@/lib/manifest/value-format";
import type { PlainMap, PlainValue } from "@/lib/manifest/yaml-widget-edit";

/**
 * What the widget builder edits (issue 44 §1), and the manifest parts it writes. Framework-free so the tests check
 * that what it writes validates and reads back the same. The builder owns only the keys it shows; everything else
 * of a widget it opens (clicks, filters, tooltips, responsive layouts…) is kept as it is.
 */

/** ECharts series types the builder offers, `area` being a line with `areaStyle`. */
export const CHART_TYPES = ["bar", "line", "area", "pie", "scatter", "heatmap", "gauge", "radar"] as const;
export type ChartType = (typeof CHART_TYPES)[number];

/** Every component the manifest knows, the chart split by its type. */
export type BuilderKind = ChartType | Exclude<Component, "echarts">;
export const BUILDER_KINDS: readonly BuilderKind[] = [...CHART_TYPES, "kpi", "table", "tabulator", "filter", "text", "markdown", "image"];

/** Kinds that read no data. */
const CONTENT_KINDS: ReadonlySet<BuilderKind> = new Set(["text", "markdown", "image"]);
export const readsData = (kind: BuilderKind) => !CONTENT_KINDS.has(kind);

export interface Sort {
  column: string;
  dir: "asc" | "desc";
}

export interface WidgetDraft {
  id: string;
  name: string;
  kind: BuilderKind;
  dataset: string;
  dimensions: string[];
  metrics: string[];
  /** The dataset's order and row limit: a widget has none of its own, so these are written to its dataset. */
  sort: Sort | null;
  limit: number | null;
  /** Axis titles of cartesian charts; "" for none. */
  xLabel: string;
  yLabel: string;
  /** The KPI tile's format; other widgets show each metric in the format its dataset declares. */
  kpiFormat: ValueFormatType;
  /** Text or markdown content; an image's URL and alternative text. */
  content: string;
  imageAlt: string;
}

const CARTESIAN: ReadonlySet<BuilderKind> = new Set(["bar", "line", "area", "scatter", "heatmap"]);

export function emptyDraft(id: string, dataset: string): WidgetDraft {
  return { id, name: "New chart", kind: "bar", dataset, dimensions: [], metrics: [], sort: null, limit: null, xLabel: "", yLabel: "", kpiFormat: "number", content: "", imageAlt: "" };
}

/** A widget id not yet taken: `base`, else `base_2`, `base_3`… */
export function freeWidgetId(base: string, taken: ReadonlySet<string>): string {
  const stem = base.replace(/[^A-Za-z0-9_-]+/g, "_").replace(/^[^A-Za-z0-9]+/, "").slice(0, 56) || "widget";
  if (!taken.has(stem)) return stem;
  for (let n = 2; ; n++) if (!taken.has(`${stem}_${n}`)) return `${stem}_${n}`;
}

const isMap = (value: unknown): value is PlainMap => typeof value === "object" && value !== null && !Array.isArray(value);

/** Kinds whose columns take the same roles: bar, line and area share theirs, so switching among them keeps the mappings. */
const mappingFamily = (kind: BuilderKind) => (kind === "bar" || kind === "line" || kind === "area" ? "cartesian" : kind);

/** Which component role each column takes, by chart type (widgets/README.md, "ECharts mappings"). */
function chartMappings(kind: ChartType, dimensions: string[], metrics: string[]): PlainMap {
  const one = (list: string[]): PlainValue => (list.length === 1 ? list[0] : list);
  const [first, second] = dimensions;
  switch (kind) {
    case "pie":
      return { ...(first ? { label: first } : {}), value: metrics[0] ?? null };
    case "gauge":
      return { value: metrics[0] ?? null, ...(first ? { label: first } : {}) };
    case "heatmap":
      return { x: first ?? null, y: second ?? null, value: metrics[0] ?? null };
    case "radar":
      return { indicator: first ?? null, value: metrics };
    case "scatter":
      return { x: metrics[0] ?? null, y: metrics[1] ?? metrics[0] ?? null, ...(first ? { label: first } : {}) };
    default:
      return { x: first ?? null, y: one(metrics), ...(second ? { series: second } : {}) };
  }
}

function withoutNulls(map: PlainMap): PlainMap {
  return Object.fromEntries(Object.entries(map).filter(([, v]) => v !== null));
}

/** `base` with `key` set, or removed when `value` is undefined. */
function put(base: PlainMap, key: string, value: PlainValue | undefined): PlainMap {
  const next = { ...base };
  if (value === undefined) delete next[key];
  else next[key] = value;
  return next;
}

function axis(base: PlainValue | undefined, type: string, name: string): PlainMap {
  return put({ ...(isMap(base) ? base : {}), type }, "name", name || undefined);
}

/** The chart's option: the opened one with the builder's keys set (series type, axes, area), its other keys kept. */
function chartOption(kind: ChartType, draft: WidgetDraft, base: PlainMap): PlainMap {
  let option = { ...base };
  const series = Array.isArray(option.series) && isMap(option.series[0]) ? option.series : [{}];
  const type = kind === "area" ? "line" : kind;
  let head = put({ ...(series[0] as PlainMap), type }, "areaStyle", kind === "area" ? (isMap((series[0] as PlainMap).areaStyle) ? (series[0] as PlainMap).areaStyle : {}) : undefined);
  if (kind === "line" && (series[0] as PlainMap).type === "line") head = put(head, "areaStyle", undefined);
  option.series = [head, ...series.slice(1)];
  if (CARTESIAN.has(kind)) {
    option.xAxis = axis(option.xAxis, kind === "scatter" ? "value" : "category", draft.xLabel);
    option.yAxis = axis(option.yAxis, kind === "heatmap" ? "category" : "value", draft.yLabel);
  } else {
    option = put(put(option, "xAxis", undefined), "yAxis", undefined);
  }
  if (kind === "heatmap" && !isMap(option.visualMap)) option.visualMap = { min: 0, calculable: true };
  if (kind === "radar" && !isMap(option.radar)) option.radar = {};
  if (kind !== "heatmap") option = put(option, "visualMap", undefined);
  if (kind !== "radar") option = put(option, "radar", undefined);
  return option;
}

/** The next free row under every widget's base layout, full width. */
export function nextLayout(widgets: readonly WidgetManifest[]): PlainMap {
  const y = widgets.reduce((bottom, w) => Math.max(bottom, w.spec.layout.y + w.spec.layout.h), 0);
  return { x: 0, y, w: 6, h: 4 };
}

/**
 * The widget manifest for a draft. `base` is the widget as opened (its plain YAML data), whose keys the builder
 * does not own are kept; `layout` places a new widget.
 */
export function widgetFromDraft(draft: WidgetDraft, base: PlainMap | null, layout: PlainMap): PlainMap {
  const baseSpec = isMap(base?.spec) ? base.spec : {};
  const chart = (CHART_TYPES as readonly string[]).includes(draft.kind) ? (draft.kind as ChartType) : null;
  const component: Component = chart ? "echarts" : (draft.kind as Component);
  let spec: PlainMap = { ...baseSpec, component, layout: isMap(baseSpec.layout) ? baseSpec.layout : layout };

  // A filter may read no data (a date control, inline options): it gets a data block only with a dataset picked.
  const dataless = draft.kind === "filter" && draft.dataset === "" && !isMap(baseSpec.data);
  if (readsData(draft.kind) && !dataless) {
    const baseData = isMap(baseSpec.data) ? baseSpec.data : {};
    const columns = [...draft.dimensions, ...draft.metrics];
    const opened = base ? draftFromWidget(base) : null;
    // Mappings are derived again only when the columns or the chart type changed: hand-written ones survive a re-save.
    const sameShape =
      opened !== null && mappingFamily(opened.kind) === mappingFamily(draft.kind) && opened.dimensions.join() === draft.dimensions.join() && opened.metrics.join() === draft.metrics.join();
    // A widget that reads its columns through mappings alone (a filter's value and label) keeps doing so.
    let data: PlainMap = put({ ...baseData, kind: "dataset", dataset: draft.dataset }, "columns", columns.length === 0 && baseData.columns === undefined ? undefined : columns);
    if (chart && !(sameShape && isMap(baseData.mappings))) data.mappings = withoutNulls(chartMappings(chart, draft.dimensions, draft.metrics));
    if (!chart && !sameShape) data = put(data, "mappings", undefined);
    spec.data = data;
  } else if (!dataless) {
    spec = put(spec, "data", undefined);
  }

  const baseDisplay = isMap(baseSpec.display) ? baseSpec.display : {};
  // A component's own display block; another component's is dropped so the manifest stays what it shows.
  const own = (key: string, value: PlainMap) => ({ [key]: value });
  const kept = (key: string) => (isMap(baseDisplay[key]) ? (baseDisplay[key] as PlainMap) : {});
  let display: PlainMap;
  switch (component) {
    case "echarts":
      display = own("echarts", { ...kept("echarts"), option: chartOption(chart!, draft, isMap(kept("echarts").option) ? (kept("echarts").option as PlainMap) : {}) });
      break;
    case "kpi":
      // `number` is the default: written only when chosen over another format or already written.
      display = own("kpi", put(kept("kpi"), "format", draft.kpiFormat === "number" && kept("kpi").format === undefined ? undefined : draft.kpiFormat));
      break;
    case "text":
    case "markdown":
      display = own(component, { ...kept(component), content: draft.content });
      break;
    case "image":
      display = own("image", { ...kept("image"), url: draft.content, alt: draft.imageAlt });
      break;
    case "filter":
      // A filter opened keeps its control and label; a new one is a select labelled with its title.
      display = own("filter", { control: "select", label: draft.name, ...kept("filter") });
      break;
    default:
      display = isMap(baseDisplay[component]) ? own(component, kept(component)) : {};
  }
  spec = put(spec, "display", Object.keys(display).length > 0 ? display : undefined);
  if (component === "filter" && !Array.isArray(spec.bindings) && draft.dimensions[0]) {
    spec.bindings = [{ target: "*", field: draft.dimensions[0], operator: "in" }];
  }

  const metadata = { ...(isMap(base?.metadata) ? base.metadata : {}), id: draft.id, name: draft.name };
  return { version: "1.0", kind: "widget", ...(base ?? {}), metadata, spec };
}

/** The draft of a widget as written (plain YAML data); datasets say which of its columns are dimensions. */
export function draftFromWidget(widget: PlainMap, datasets: readonly Dataset[] = []): WidgetDraft {
  const spec = isMap(widget.spec) ? widget.spec : {};
  const data = isMap(spec.data) ? spec.data : {};
  const display = isMap(spec.display) ? spec.display : {};
  const metadata = isMap(widget.metadata) ? widget.metadata : {};
  const option = isMap(display.echarts) && isMap(display.echarts.option) ? display.echarts.option : {};
  const head = Array.isArray(option.series) && isMap(option.series[0]) ? option.series[0] : {};
  const component = String(spec.component ?? "echarts");
  const chart = head.type === "line" && head.areaStyle !== undefined ? "area" : String(head.type ?? "bar");
  const kind = (component === "echarts" ? chart : component) as BuilderKind;
  const columns = Array.isArray(data.columns) ? data.columns.map(String) : [];
  const dataset = datasets.find((d) => d.id === data.dataset);
  const metricIds = new Set(dataset?.metrics.map((m) => m.id) ?? []);
  // Without the dataset at hand, the mappings' value roles tell metrics from dimensions.
  const mappings = isMap(data.mappings) ? data.mappings : {};
  const valueRoles = new Set(["y", "value"].flatMap((role) => (Array.isArray(mappings[role]) ? mappings[role].map(String) : mappings[role] ? [String(mappings[role])] : [])));
  if (kind === "scatter" && mappings.x) valueRoles.add(String(mappings.x));
  const isMetric = (c: string) => (dataset ? metricIds.has(c) : valueRoles.has(c));
  const order = dataset?.order_by?.[0];
  const axisName = (key: string) => (isMap(option[key]) && typeof option[key].name === "string" ? (option[key].name as string) : "");
  const content = isMap(display.text) ? display.text.content : isMap(display.markdown) ? display.markdown.content : isMap(display.image) ? display.image.url : "";
  return {
    id: String(metadata.id ?? ""),
    name: String(metadata.name ?? ""),
    kind,
    dataset: String(data.dataset ?? ""),
    dimensions: columns.filter((c) => !isMetric(c)),
    metrics: columns.filter(isMetric),
    sort: order ? { column: order.column, dir: order.dir } : null,
    limit: dataset?.limit ?? null,
    xLabel: axisName("xAxis"),
    yLabel: axisName("yAxis"),
    kpiFormat: isMap(display.kpi) && typeof display.kpi.format === "string" ? (display.kpi.format as ValueFormatType) : "number",
    content: typeof content === "string" ? content : "",
    imageAlt: isMap(display.image) && typeof display.image.alt === "string" ? display.image.alt : "",
  };
}

/** The dataset with the draft's sort and limit, its other keys as they are. */
export function datasetWithOrder(dataset: PlainMap, draft: WidgetDraft): PlainMap {
  const ordered = put(dataset, "order_by", draft.sort ? [{ column: draft.sort.column, dir: draft.sort.dir }] : undefined);
  return put(ordered, "limit", draft.limit ?? undefined);
}

const NUMERIC = /^(smallint|integer|bigint|int[248]?|numeric|decimal|real|double precision|float[48]?)\b/i;

/**
 * A dataset over one of the organization's own tables: its text columns as dimensions, a row count and the sum of
 * each numeric column as metrics. `org_id` is left out (RLS keeps every row the organization's).
 */
export function datasetForTable(table: CatalogTable, id: string): Dataset {
  const columns = table.columns.filter((c) => c.name !== "org_id");
  const field = (name: string) => name.replace(/[^A-Za-z0-9_]/g, "_").replace(/^(?=\d)/, "_").slice(0, 64);
  const quoted = (name: string) => `${table.name}."${name.replaceAll('"', '""')}"`;
  return {
    id,
    from: table.name,
    dimensions: columns.filter((c) => !NUMERIC.test(c.type ?? "")).map((c) => ({ id: field(c.name), column: quoted(c.name), label: c.name })),
    metrics: [
      { id: "row_count", type: "sql", expression: "count(*)", label: "Rows" },
      ...columns.filter((c) => NUMERIC.test(c.type ?? "")).map((c) => ({ id: `${field(c.name)}_sum`.slice(0, 64), type: "sql" as const, expression: `sum(${quoted(c.name)})`, label: `Sum of ${c.name}` })),
    ],
  };
}

/**
 * The dashboard's tabs with the widget listed in `tabId` only (a widget in no tab is parked: no page shows it).
 * Other tabs keep their lists; a dashboard without tabs shows every widget and is left as it is.
 */
export function tabsWithWidget(tabs: PlainValue | undefined, tabId: string, widgetId: string): PlainValue[] | undefined {
  if (!Array.isArray(tabs) || tabs.length === 0) return undefined;
  return tabs.map((tab) => {
    if (!isMap(tab)) return tab;
    const widgets = Array.isArray(tab.widgets) ? tab.widgets : [];
    const listed = widgets.includes(widgetId);
    if (tab.id === tabId) return listed ? tab : { ...tab, widgets: [...widgets, widgetId] };
    return listed ? { ...tab, widgets: widgets.filter((w) => w !== widgetId) } : tab;
  });
}
