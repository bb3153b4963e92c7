import { correctBounds, verticalCompactor, type LayoutItem } from "react-grid-layout/core";
import { jsonDepthExceeds } from "@/lib/json";
import { filterUses } from "@/lib/query/filters";
import { GRID_COLUMNS } from "@/lib/manifest/grid";
import type { Breakpoint, DashboardManifest, WidgetManifest } from "@/lib/manifest/schema";
import { type ColumnFormats, widgetColumnFormats } from "./column-formats";

/**
 * Framework-free rules of the dashboard viewer, shared by the server pages (first query)
 * and the client shell (re-queries): which widgets a filter drives, which widgets a tab
 * shows, how filter values live in the URL and how the grid lays out per breakpoint.
 */

/** A manifest as the browser gets it: plain JSON, no Maps. */
export interface ViewManifest {
  manifest: DashboardManifest;
  widgets: WidgetManifest[];
  /**
   * Widget id → its columns' declared formats, for views whose datasets were removed
   * (renderOnlyView); other views read them from `manifest.spec.datasets` (viewColumnFormats).
   */
  formats?: Readonly<Record<string, ColumnFormats>>;
  /** The organization's currency (orgView): money whose format names no code reads in it; USD without it (the editor's preview). */
  currency?: string;
}

/**
 * A manifest's view for an organization: a `currency` format that names no code (a column's, or a KPI tile's
 * `display.kpi` without a prefix to stand for the symbol) reads in the organization's currency, on every surface
 * that draws the view (viewer, embeds, grids and their exports, reports, alert messages).
 */
export function orgView(parsed: { manifest: DashboardManifest; widgets: WidgetManifest[] }, currency: string): ViewManifest {
  return { manifest: parsed.manifest, widgets: parsed.widgets.map((widget) => kpiInCurrency(widget, currency)), currency };
}

function kpiInCurrency(widget: WidgetManifest, currency: string): WidgetManifest {
  const kpi = widget.spec.display.kpi;
  if (kpi?.format !== "currency" || kpi.currency !== undefined || kpi.prefix) return widget;
  return { ...widget, spec: { ...widget.spec, display: { ...widget.spec.display, kpi: { ...kpi, currency } } } };
}

/** The declared formats of a widget's columns in this view: one source for tiles, tables, grids and charts. */
export function viewColumnFormats(view: ViewManifest, widget: WidgetManifest): ColumnFormats {
  return view.formats?.[widget.metadata.id] ?? widgetColumnFormats(view.manifest.spec.datasets, widget, view.currency);
}

/**
 * The manifest as an anonymous viewer (embed, public link) gets it: layout, component options and
 * wiring only. Dataset definitions, SQL, KPI ids and inline rows stay on the server; a widget's
 * data block keeps its kind, columns and mappings, which the components read, and its columns'
 * declared formats go along in `formats`. Parked widgets (placed in no tab or band) are left out.
 */
export function renderOnlyView(view: ViewManifest): ViewManifest {
  const { datasets: _datasets, widgets: _inline, ...spec } = view.manifest.spec;
  const placed = placedWidgetIds(view.manifest, view.widgets);
  const formats = Object.fromEntries(
    view.widgets.filter((widget) => placed.has(widget.metadata.id)).flatMap((widget) => {
      const declared = viewColumnFormats(view, widget);
      return Object.keys(declared).length > 0 ? [[widget.metadata.id, declared]] : [];
    }),
  );
  return {
    formats,
    ...(view.currency !== undefined ? { currency: view.currency } : {}),
    manifest: { ...view.manifest, spec: { ...spec, datasets: [] } },
    widgets: view.widgets.filter((widget) => placed.has(widget.metadata.id)).map((widget) => {
      const data = widget.spec.data;
      if (!data) return widget;
      return { ...widget, spec: { ...widget.spec, data: { kind: data.kind, ...(data.columns ? { columns: data.columns } : {}), ...(data.mappings ? { mappings: data.mappings } : {}) } } };
    }),
  };
}

/** Filter widgets whose value changes what `widgetId` shows: the viewer's re-query rule, read from the engine's own (filterUses). */
export function filtersAffecting(widgets: readonly WidgetManifest[], widgetId: string): string[] {
  const widget = widgets.find((w) => w.metadata.id === widgetId);
  return widget ? [...new Set(filterUses(widgets, widget).map((use) => use.source))].sort() : [];
}

/** Widgets that fetch data (filters with dataset options included); text, image and markdown carry none. */
export function isDataWidget(widget: WidgetManifest): boolean {
  return widget.spec.data !== undefined;
}

/** The data widgets a change of `filterId` re-queries. */
export function widgetsAffectedBy(widgets: readonly WidgetManifest[], filterId: string): string[] {
  return widgets.filter((w) => isDataWidget(w) && filtersAffecting(widgets, w.metadata.id).includes(filterId)).map((w) => w.metadata.id);
}

/**
 * A widget's data depends only on the values of the filters affecting it; this key changes
 * exactly when that data must be fetched again. Absent values (the filter's default) are
 * distinct from an explicit null (the filter cleared).
 */
export function dependencyKey(widgets: readonly WidgetManifest[], widgetId: string, filters: Readonly<Record<string, unknown>>): string {
  return JSON.stringify(filtersAffecting(widgets, widgetId).map((id) => [id, id in filters ? filters[id] : "\u0000default"]));
}

// ------------------------------------------------------------------ regions of the page

export interface PageRegions {
  header: string[];
  footer: string[];
  tabs: { id: string; name: string }[];
  /** The tab shown, always one of `tabs` (or "" for a dashboard without tabs). */
  tab: string;
  /** Filter widgets in the filter panel for this tab. */
  filters: string[];
  /** Widgets in the grid for this tab, in manifest order. */
  grid: string[];
}

/**
 * The widgets a dashboard places on its pages: those its tabs and bands list, or, in a dashboard
 * without tabs, every widget. A widget in no tab and no band of a dashboard with tabs is parked:
 * it is never shown, queried or sent to a browser, and as a filter it filters nothing (issue 26;
 * the policy serves manifests without parked widgets, lib/dashboards/manifest.ts `servedManifest`).
 */
export function placedWidgetIds(manifest: DashboardManifest, widgets: readonly WidgetManifest[]): Set<string> {
  const { tabs, config } = manifest.spec;
  if (tabs.length === 0) return new Set(widgets.map((w) => w.metadata.id));
  return new Set([...tabs.flatMap((t) => t.widgets), ...(config?.header?.widgets ?? []), ...(config?.footer?.widgets ?? [])]);
}

/**
 * Splits the widgets into header band, footer band, filter panel and grid for one tab.
 * A dashboard without tabs shows every widget that is in neither band; with tabs, a tab shows
 * the widgets it lists, and a widget listed in no tab and no band shows nowhere (parked).
 */
export function pageRegions(view: ViewManifest, requestedTab: string | null | undefined): PageRegions {
  const config = view.manifest.spec.config;
  const header = config?.header?.widgets ?? [];
  const footer = config?.footer?.widgets ?? [];
  const inBand = new Set([...header, ...footer]);
  const tabs = view.manifest.spec.tabs;
  const active = tabs.find((t) => t.id === requestedTab) ?? tabs[0];
  const onThisTab = new Set(active?.widgets ?? []);
  const shown = view.widgets.filter((w) => !inBand.has(w.metadata.id) && (!active || onThisTab.has(w.metadata.id)));
  return {
    header,
    footer,
    tabs: tabs.map((t) => ({ id: t.id, name: t.name })),
    tab: active?.id ?? "",
    filters: shown.filter((w) => w.spec.component === "filter").map((w) => w.metadata.id),
    grid: shown.filter((w) => w.spec.component !== "filter").map((w) => w.metadata.id),
  };
}

/** Every widget that is on screen for a tab (bands, filters, grid): what the first query computes. */
export function visibleWidgetIds(regions: PageRegions): string[] {
  return [...new Set([...regions.header, ...regions.filters, ...regions.grid, ...regions.footer])];
}

/** Data widgets among `ids`. */
export function dataWidgetIds(view: ViewManifest, ids: readonly string[]): string[] {
  const wanted = new Set(ids);
  return view.widgets.filter((w) => wanted.has(w.metadata.id) && isDataWidget(w)).map((w) => w.metadata.id);
}

// ------------------------------------------------------------------ filter values in the URL

/** Search parameter of a filter's value: `f.<filter id>`; `tab`, `version` and `preview` stay free. */
export const FILTER_PARAM_PREFIX = "f.";

/**
 * Strings go into the URL as typed ("last month", "2026-03-01 to 2026-03-31") so links stay
 * readable; everything else (lists, numbers, null for a cleared filter) and strings that would
 * read back as JSON are JSON.
 */
export function encodeFilterValue(value: unknown): string {
  if (typeof value === "string") {
    let readsAsJson = true;
    try {
      JSON.parse(value);
    } catch {
      readsAsJson = false;
    }
    return readsAsJson ? JSON.stringify(value) : value;
  }
  return JSON.stringify(value ?? null);
}

/** A value nested past MAX_JSON_DEPTH stays the text it is (a string no filter matches), never a value deep enough to overflow the stack. */
export function decodeFilterValue(text: string): unknown {
  if (jsonDepthExceeds(text)) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

type ParamSource = { get(name: string): string | null } | Readonly<Record<string, string | string[] | undefined>>;

function readParam(params: ParamSource, name: string): string | null {
  if (typeof (params as { get?: unknown }).get === "function") return (params as { get(name: string): string | null }).get(name);
  const raw = (params as Readonly<Record<string, string | string[] | undefined>>)[name];
  return Array.isArray(raw) ? (raw[0] ?? null) : (raw ?? null);
}

/** The filter values set in the URL, for the dashboard's filter widgets only. */
export function filtersFromParams(view: ViewManifest, params: ParamSource): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const w of view.widgets) {
    if (w.spec.component !== "filter") continue;
    const raw = readParam(params, FILTER_PARAM_PREFIX + w.metadata.id);
    if (raw !== null) values[w.metadata.id] = decodeFilterValue(raw);
  }
  return values;
}

export function tabFromParams(params: ParamSource): string | null {
  return readParam(params, "tab");
}

/** The data widgets on screen for the tab `params` ask for: what a page's loader queries first (signed-in, embedded or public). */
export function firstQueryWidgetIds(view: ViewManifest, params: ParamSource): string[] {
  return dataWidgetIds(view, visibleWidgetIds(pageRegions(view, tabFromParams(params))));
}

/** The URL search string after one filter changed; `undefined` removes it (back to the filter's default). */
export function withFilterParam(search: string, filterId: string, value: unknown): string {
  const params = new URLSearchParams(search);
  if (value === undefined) params.delete(FILTER_PARAM_PREFIX + filterId);
  else params.set(FILTER_PARAM_PREFIX + filterId, encodeFilterValue(value));
  const text = params.toString();
  return text ? `?${text}` : "";
}

// ------------------------------------------------------------------ responsive grid

/** Minimum container widths (px) of the manifest breakpoints. */
export const BREAKPOINT_WIDTHS: Record<Breakpoint, number> = { wide: 1500, desktop: 1000, tablet: 640, mobile: 0 };
/**
 * The breakpoints a manifest uses (`spec.responsive.breakpoints`, all four by default) with their
 * minimum widths; the narrowest one listed starts at 0 so every width has a layout.
 */
export function activeBreakpoints(listed: readonly Breakpoint[] | undefined): Partial<Record<Breakpoint, number>> {
  const chosen = (listed && listed.length > 0 ? [...new Set(listed)] : (Object.keys(BREAKPOINT_WIDTHS) as Breakpoint[])).sort((a, b) => BREAKPOINT_WIDTHS[a] - BREAKPOINT_WIDTHS[b]);
  return Object.fromEntries(chosen.map((bp, i) => [bp, i === 0 ? 0 : BREAKPOINT_WIDTHS[bp]]));
}

export interface GridBox {
  i: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

/**
 * Layouts per breakpoint: `layout.responsive[bp]` where given, the base layout otherwise.
 * On `mobile` every widget is stacked full width in reading order (base y, then x), keeping
 * a mobile height where the manifest gives one; a manifest's own mobile box keeps its width.
 */
export function responsiveLayouts(widgets: readonly WidgetManifest[]): Record<Breakpoint, GridBox[]> {
  const box = (w: WidgetManifest, bp: Breakpoint): GridBox => {
    const { x, y, w: width, h } = w.spec.layout.responsive?.[bp] ?? w.spec.layout;
    return { i: w.metadata.id, x, y, w: width, h };
  };
  const readingOrder = [...widgets].sort((a, b) => a.spec.layout.y - b.spec.layout.y || a.spec.layout.x - b.spec.layout.x);
  let y = 0;
  const mobile = readingOrder.map((w) => {
    const own = w.spec.layout.responsive?.mobile;
    const stacked = { i: w.metadata.id, x: own?.x ?? 0, y, w: own?.w ?? GRID_COLUMNS, h: own?.h ?? w.spec.layout.h };
    y += stacked.h;
    return stacked;
  });
  return {
    wide: widgets.map((w) => box(w, "wide")),
    desktop: widgets.map((w) => box(w, "desktop")),
    tablet: widgets.map((w) => box(w, "tablet")),
    mobile,
  };
}

/** The container widths at which a grid's placement may change: the four breakpoints' minimum widths, narrowest first. */
const WIDTH_RANGES = (Object.keys(BREAKPOINT_WIDTHS) as Breakpoint[]).sort((a, b) => BREAKPOINT_WIDTHS[a] - BREAKPOINT_WIDTHS[b]);

/** Where a widget sits in one width range: its CSS `grid-area` (1-based row and column, spans). */
export type GridArea = `${number} / ${number} / span ${number} / span ${number}`;

/**
 * Every widget's grid area in each width range (keyed by the breakpoint whose minimum width starts the range),
 * decided on the server so the page paints laid out, with no measuring in the browser. Each range takes the
 * layouts of the manifest breakpoint in force at its start (`activeBreakpoints`), then the placement
 * react-grid-layout gives them: boxes clamped to the 12 columns and compacted upwards (its own `correctBounds`
 * and `verticalCompactor`), so a manifest written against react-grid-layout lands where it always did.
 */
export function gridAreas(widgets: readonly WidgetManifest[], listed: readonly Breakpoint[] | undefined): Map<string, Record<Breakpoint, GridArea>> {
  const layouts = responsiveLayouts(widgets);
  const active = Object.entries(activeBreakpoints(listed)) as [Breakpoint, number][];
  const areas = new Map<string, Record<Breakpoint, GridArea>>(widgets.map((w) => [w.metadata.id, {} as Record<Breakpoint, GridArea>]));
  for (const range of WIDTH_RANGES) {
    const start = BREAKPOINT_WIDTHS[range];
    const [inForce] = active.filter(([, min]) => min <= start).sort((a, b) => b[1] - a[1])[0];
    const items: LayoutItem[] = layouts[inForce].map((b) => ({ ...b }));
    const placed = verticalCompactor.compact(correctBounds(items, { cols: GRID_COLUMNS }), GRID_COLUMNS);
    for (const b of placed) areas.get(b.i)![range] = `${b.y + 1} / ${b.x + 1} / span ${b.h} / span ${b.w}`;
  }
  return areas;
}
