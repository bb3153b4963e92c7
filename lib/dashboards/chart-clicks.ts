import { z } from "zod";
import { type ClickContext, clickFilterValue } from "@/lib/manifest-check/interactions";
import type { WidgetManifest } from "@/lib/manifest/schema";
import { isSitePath } from "@/lib/manifest/site-path";
import { type ChartData, type Mappings, chartType, orderedCategories } from "./chart-option";
import { toNumber } from "./format";
import { FILTER_PARAM_PREFIX, withFilterParam } from "./wiring";

/**
 * What a click on a chart's data point does (issue 27 §2), framework-free: which rows the point
 * stands for (read the way ./chart-option.ts drew them), which fields it fixes, and the plan that
 * follows from the widget's `on_click` — filter changes on this page, or a page to open. The
 * viewer (components/dashboards/dashboard-view.tsx) carries the plan out.
 */

type Row = Record<string, unknown>;

// How ./chart-option.ts picks columns and names categories, which a click has to read back the same way.
// (Kept here rather than exported from there while that file is reworked for issue 27 §3.)
function mapped(mappings: Mappings, ...keys: string[]): string[] {
  for (const k of keys) {
    const value = mappings?.[k];
    if (typeof value === "string") return [value];
    if (Array.isArray(value) && value.length > 0) return value;
  }
  return [];
}
const isNumericColumn = (rows: readonly Row[], column: string) => rows.some((r) => r[column] !== null && r[column] !== undefined) && rows.every((r) => r[column] === null || r[column] === undefined || toNumber(r[column]) !== null);
const columnsOf = (data: ChartData) => (data.columns.length > 0 ? data.columns : Object.keys(data.rows[0] ?? {}));
function categoryColumn(data: ChartData, mappings: Mappings, keys: string[]): string | undefined {
  const [chosen] = mapped(mappings, ...keys);
  return chosen ?? columnsOf(data).find((c) => !isNumericColumn(data.rows, c)) ?? columnsOf(data)[0];
}
const key = (value: unknown) => (value === null || value === undefined ? "(none)" : String(value));

/** The parts of an ECharts click event this reads. */
export interface ChartClick {
  seriesIndex?: number;
  seriesName?: string;
  name?: string;
  dataIndex?: number;
  value?: unknown;
}

/** The rows a clicked point was drawn from; empty when the point stands for no rows (a radar polygon is a metric). */
export function clickedRows(widget: WidgetManifest, data: ChartData, click: ChartClick): Row[] {
  const base = widget.spec.display.echarts?.option ?? {};
  const mappings = widget.spec.data?.mappings;
  const rows = data.rows;
  const [split] = mapped(mappings, "series");
  // A series split by a column is named by its value, or "<value> · <metric>" when it plots several.
  const inSeries = (row: Row) => !split || click.seriesName === undefined || click.seriesName === key(row[split]) || click.seriesName.startsWith(`${key(row[split])} · `);
  switch (chartType(base, mappings)) {
    case "line":
    case "bar": {
      const x = categoryColumn(data, mappings, ["x", "category", "label", "name"]);
      if (!x) return [];
      // A value or time axis plots [x, y] pairs and names no category.
      const category = click.name ? click.name : Array.isArray(click.value) ? key(click.value[0]) : undefined;
      return category === undefined ? [] : rows.filter((r) => key(r[x]) === category && inSeries(r));
    }
    case "pie": {
      const name = categoryColumn(data, mappings, ["label", "name", "x", "category"]);
      return name && click.name !== undefined ? rows.filter((r) => key(r[name]) === click.name) : [];
    }
    case "scatter": {
      // Each point is one row of its series, in row order.
      const row = rows.filter(inSeries)[click.dataIndex ?? -1];
      return row ? [row] : [];
    }
    case "heatmap": {
      const text = columnsOf(data).filter((c) => !isNumericColumn(rows, c));
      const [x = text[0]] = mapped(mappings, "x");
      const [y = text.find((c) => c !== x)] = mapped(mappings, "y");
      if (!x || !y || !Array.isArray(click.value)) return [];
      const cx = orderedCategories(rows.map((r) => r[x]))[click.value[0] as number];
      const cy = orderedCategories(rows.map((r) => r[y]))[click.value[1] as number];
      return rows.filter((r) => key(r[x]) === cx && key(r[y]) === cy);
    }
    case "gauge":
      return rows.slice(0, 1);
    case "radar":
      return [];
  }
}

type Obj = Record<string, unknown>;

const seriesOf = (option: Obj): Obj[] => (Array.isArray(option.series) ? option.series : option.series ? [option.series] : []).filter((s): s is Obj => s !== null && typeof s === "object");
const categoriesOf = (option: Obj): unknown[] => {
  const axes = [option.xAxis, option.yAxis].flatMap((a) => (Array.isArray(a) ? a : [a])) as (Obj | undefined)[];
  return (axes.find((a) => a?.type === "category" && Array.isArray(a.data))?.data as unknown[] | undefined) ?? [];
};

/**
 * The points of a built option (./chart-option.ts) as a click on each would report them, series by series: what a
 * keyboard walks through (arrows move, Enter clicks). Points without a value (gaps) are left out; a radar's polygons
 * stand for no rows, so a radar has none.
 */
export function chartPoints(option: Obj): ChartClick[][] {
  const categories = categoriesOf(option);
  return seriesOf(option).map((series, seriesIndex) => {
    if (series.type === "radar" || !Array.isArray(series.data)) return [];
    const seriesName = typeof series.name === "string" ? series.name : undefined;
    const points: ChartClick[] = [];
    series.data.forEach((item: unknown, dataIndex) => {
      const entry = item !== null && typeof item === "object" && !Array.isArray(item) ? (item as Obj) : { value: item };
      if (entry.value === null || entry.value === undefined) return;
      const name = typeof entry.name === "string" ? entry.name : categories[dataIndex] !== undefined ? String(categories[dataIndex]) : undefined;
      points.push({ seriesIndex, seriesName, dataIndex, value: entry.value, ...(name !== undefined ? { name } : {}) });
    });
    return points;
  });
}

/**
 * The point a click at category `index` and value `at` picks on a line or area chart: of the series' points at that
 * category, the one whose value is nearest (a click on a line, an area or between the ~8 px symbols finds its point).
 */
export function nearestPoint(option: Obj, index: number, at: number): ChartClick | null {
  let best: { click: ChartClick; distance: number } | null = null;
  for (const points of chartPoints(option)) {
    const point = points.find((p) => p.dataIndex === index);
    const value = point ? toNumber(Array.isArray(point.value) ? point.value[1] : point.value) : null;
    if (!point || value === null) continue;
    const distance = Math.abs(value - at);
    if (!best || distance < best.distance) best = { click: point, distance };
  }
  return best?.click ?? null;
}

/** The value each field holds in every row of the point; a field whose rows disagree (or that none has) is left out. */
export function pointFields(rows: readonly Row[], fields: readonly string[]): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const field of fields) {
    const distinct = new Set(rows.map((r) => JSON.stringify(r[field] ?? null)));
    if (rows.length > 0 && distinct.size === 1 && rows[0][field] !== null && rows[0][field] !== undefined) values[field] = rows[0][field];
  }
  return values;
}

/** One filter a click sets: its new value and what it held before (undefined: its default). */
export interface FilterChange {
  filterId: string;
  label: string;
  value: unknown;
  previous: unknown;
  /** What a chip shows: the clicked point's name where it has one. */
  text: string;
}

export type ClickPlan =
  | { kind: "filters"; changes: FilterChange[]; tab?: string; skipped: string[] }
  | { kind: "open"; href: string; skipped: string[] }
  | { kind: "none"; reason: string };

export interface ClickSituation {
  context: ClickContext;
  /** Filter values set in the URL (left out: the filter's default). */
  urlFilters: Readonly<Record<string, unknown>>;
  /** Filters an embed grant fixes: a click never changes them. */
  locked: ReadonlySet<string>;
  /** An embed or public link: it opens nothing outside its own dashboard. */
  anonymous: boolean;
}

/** The plan for a click on `widget`'s point made of `rows` (`pointName`: the category or slice clicked). */
export function planClick(widget: WidgetManifest, rows: readonly Row[], pointName: string | undefined, situation: ClickSituation): ClickPlan {
  const click = widget.spec.on_click;
  if (!click) return { kind: "none", reason: "" };
  const { context } = situation;
  const types = context.fieldTypes[widget.metadata.id] ?? {};
  const skipped: string[] = [];

  const changes = (entries: readonly { filter: string; field: string }[], targets: ClickContext["filters"], here: boolean): FilterChange[] => {
    const fields = pointFields(rows, entries.map((e) => e.field));
    const out: FilterChange[] = [];
    for (const entry of entries) {
      const target = targets[entry.filter];
      if (!target) continue;
      if (here && situation.locked.has(entry.filter)) {
        skipped.push(`${target.label} is fixed by the page that embeds this dashboard`);
        continue;
      }
      const value = clickFilterValue(fields[entry.field], types[entry.field] ?? null, target);
      if (!value.ok) {
        skipped.push(`${target.label} was not set: ${value.reason}`);
        continue;
      }
      const named = pointName && !target.date ? pointName : value.text;
      out.push({ filterId: entry.filter, label: target.label, value: value.value, previous: here ? situation.urlFilters[entry.filter] : undefined, text: named });
    }
    return out;
  };

  if (click.set_filters) {
    const set = changes(click.set_filters, context.filters, true);
    return set.length > 0 ? { kind: "filters", changes: set, skipped } : { kind: "none", reason: skipped.join("; ") || "This point sets no filter" };
  }
  const drill = click.drill_through!;
  if (drill.url !== undefined) {
    if (situation.anonymous) return { kind: "none", reason: "Links out of an embedded or public dashboard are not followed" };
    const fields = pointFields(rows, [...drill.url.matchAll(/\{([^{}]*)\}/g)].map((m) => m[1]));
    let missing = "";
    const href = drill.url.replace(/\{([^{}]*)\}/g, (_, field: string) => {
      if (!(field in fields)) missing = field;
      return encodeURIComponent(String(fields[field] ?? ""));
    });
    if (missing) return { kind: "none", reason: `The clicked point has no single value for ${missing}` };
    // A value at the start of the path (`/{field}`) can make it lead off the site: `/%2Fevil.example`.
    return isSitePath(href) ? { kind: "open", href, skipped } : { kind: "none", reason: "This link would lead off this site" };
  }
  const slug = drill.dashboard ?? context.slug;
  const target = context.drills[slug] ?? (slug === context.slug ? { filters: context.filters, tabs: [] } : null);
  if (!target) return { kind: "none", reason: situation.anonymous ? "An embedded dashboard opens no other dashboard" : `You cannot open the dashboard '${slug}'` };
  const set = changes(drill.filters, target.filters, slug === context.slug);
  if (slug === context.slug) return { kind: "filters", changes: set, tab: drill.tab, skipped };
  let search = drill.tab ? `?tab=${encodeURIComponent(drill.tab)}` : "";
  for (const change of set) search = withFilterParam(search, change.filterId, change.value);
  return { kind: "open", href: `/dashboards/custom/${encodeURIComponent(slug)}${search}`, skipped };
}

/** The URL search after a plan's filter changes (and tab) are applied to `search`. */
export function searchAfter(search: string, changes: readonly FilterChange[], tab?: string): string {
  let next = search;
  for (const change of changes) next = withFilterParam(next, change.filterId, change.value);
  if (tab === undefined) return next;
  const params = new URLSearchParams(next);
  params.set("tab", tab);
  return `?${params}`;
}

/** Filters one chart click set, undone together. */
export interface ClickChip {
  id: number;
  /** The chart clicked. */
  source: string;
  changes: FilterChange[];
}

/**
 * The chips after a click: a chip sharing a filter with the new one goes, and when it was still
 * shown (`shown`: its filters still hold its values) the new chip's undo goes back to what that
 * chip would have restored, i.e. to before the first click.
 */
export function chipsAfterClick(chips: readonly ClickChip[], shown: readonly ClickChip[], chip: ClickChip): ClickChip[] {
  const earlier = new Map(shown.flatMap((c) => c.changes.map((change) => [change.filterId, change.previous] as const)));
  const changes = chip.changes.map((c) => (earlier.has(c.filterId) ? { ...c, previous: earlier.get(c.filterId) } : c));
  return [...chips.filter((c) => !c.changes.some((old) => changes.some((change) => change.filterId === old.filterId))), { ...chip, changes }];
}

/** The URL search with a click's changes undone: each filter back to what it held before. */
export function searchUndoing(search: string, changes: readonly FilterChange[]): string {
  let next = search;
  for (const change of changes) next = withFilterParam(next, change.filterId, change.previous);
  return next;
}

/** A click's changes still hold when every filter it set has that value in the URL (changed since by hand: its chip goes). */
export function stillApplied(urlSearch: string, changes: readonly FilterChange[]): boolean {
  const params = new URLSearchParams(urlSearch);
  return changes.every((c) => params.get(FILTER_PARAM_PREFIX + c.filterId) === new URLSearchParams(withFilterParam("", c.filterId, c.value)).get(FILTER_PARAM_PREFIX + c.filterId));
}

const storedChips = z
  .array(
    z.object({
      id: z.number(),
      source: z.string(),
      // A filter's value and what it held before are JSON (URL parameters); undefined (its default) is left out by JSON.
      changes: z.array(z.object({ filterId: z.string(), label: z.string(), text: z.string(), value: z.json().optional(), previous: z.json().optional() })).max(100),
    }),
  )
  .max(100);

/**
 * The chips kept for a page (sessionStorage, so a reload keeps each click's undo, issue 44 §8), or none when what
 * is stored is missing or not chips: it is the browser's, so it is read as untrusted.
 */
export function restoredChips(stored: string | null): ClickChip[] {
  if (!stored) return [];
  try {
    const parsed = storedChips.safeParse(JSON.parse(stored));
    return parsed.success ? parsed.data.map((chip) => ({ ...chip, changes: chip.changes.map((change) => ({ ...change, value: change.value, previous: change.previous })) })) : [];
  } catch {
    return [];
  }
}
