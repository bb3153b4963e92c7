import { CHART_TYPES, withoutUnsafeParts } from "@/lib/manifest/echarts-option-allow-list";
import { resolveFormat } from "@/lib/manifest/value-format";
import type { ColumnFormats } from "./column-formats";
import { formatCompact, formatNumber, formatValue, humanize, toNumber } from "./format";

/**
 * Builds the option handed to ECharts from the manifest's base option
 * (`display.echarts.option`) and the widget's rows, following `data.mappings`:
 *
 * - line, bar: `x` (or `category`) is the category, `y` (or `value`) one column or a list
 *   (one series per column), `series` an optional column whose values split the rows into
 *   series. A category `yAxis` makes the bars horizontal; a `value`/`time` x axis plots pairs.
 * - scatter: `x`, `y`, optional `label` (point name) and `series`.
 * - pie: `label` (or `name`, `x`) and `value` (or `y`).
 * - gauge: `value` of the first row, named by `label` when given.
 * - heatmap: `x`, `y`, `value`; the visualMap range is taken from the data unless the base sets it.
 * - radar: `indicator` (axes) and `value` (one or more columns, one polygon each). Several
 *   columns are drawn as a share of their own maximum so columns of different scales can be
 *   compared; tooltips show the real figures.
 *
 * Missing mappings fall back to the first text column (category) and the numeric columns
 * (values). The i-th series takes the i-th base series as its template (the last one repeats).
 * Everything the base option sets explicitly wins over the defaults added here, except where the
 * chart's box (ChartContext) shows it would not fit: a pie's or radar's radius then shrinks so
 * their labels stay whole.
 */
export type EchartsOption = Record<string, unknown>;
export type Mappings = Record<string, string | string[]> | undefined;

export interface ChartData {
  columns: string[];
  rows: Record<string, unknown>[];
}

/**
 * What the option is laid out for: the chart's box in CSS pixels and how wide a label is there
 * (12 px sans-serif, ECharts' default; the browser measures on a canvas, elsewhere it is
 * estimated), and the declared formats of the widget's columns for tooltips.
 */
export interface ChartContext {
  box?: { width: number; height: number };
  measureText?: (text: string) => number;
  formats?: ColumnFormats;
}

type Row = Record<string, unknown>;
type Obj = Record<string, unknown>;

/** Height of a 12 px label line: neighbouring labels closer than this overlap. */
const LABEL_LINE = 16;
/** Label sizes a small box steps down to before labels are left out or cut (9 px on screen, 9 pt on paper still read). */
const SMALL_LABELS = [10, 9];
/** The share of a chart's height upright (90°) category labels may take (ECharts keeps the rest, at least, for the plot). */
const UPRIGHT_ROOM = 0.6;

/**
 * An estimate of the width of `text` in 12 px sans-serif (Helvetica/Arial metrics, within about
 * 10% on words), for callers with no canvas to measure on.
 */
export function estimateTextWidth(text: string): number {
  let width = 0;
  for (const ch of text) {
    if (/[iljtfI.,:;'|!() ]/.test(ch)) width += 3.6;
    else if (/[mwMW@]/.test(ch)) width += 10;
    else if (/[A-Z]/.test(ch)) width += 8.2;
    else if (/[\u0000-\u024f]/.test(ch)) width += 6.7;
    else width += 12; // CJK and other wide scripts
  }
  return width;
}

function widest(labels: readonly string[], context: ChartContext): number {
  const measure = context.measureText ?? estimateTextWidth;
  return labels.reduce((max, label) => Math.max(max, measure(label)), 0);
}

const SERIES_TYPES = CHART_TYPES;
export type SeriesType = (typeof SERIES_TYPES)[number];

function isObject(value: unknown): value is Obj {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Mapping values as a list (a single column or a list of columns). */
function mapped(mappings: Mappings, ...keys: string[]): string[] {
  for (const key of keys) {
    const value = mappings?.[key];
    if (typeof value === "string") return [value];
    if (Array.isArray(value) && value.length > 0) return value;
  }
  return [];
}

function isNumericColumn(rows: Row[], column: string): boolean {
  let seen = false;
  for (const row of rows) {
    const cell = row[column];
    if (cell === null || cell === undefined) continue;
    if (toNumber(cell) === null) return false;
    seen = true;
  }
  return seen;
}

function columnsOf(data: ChartData): string[] {
  return data.columns.length > 0 ? data.columns : Object.keys(data.rows[0] ?? {});
}

/** The category column: mapped, else the first column that is not numeric, else the first. */
function categoryColumn(data: ChartData, mappings: Mappings, keys: string[]): string | undefined {
  const [chosen] = mapped(mappings, ...keys);
  if (chosen) return chosen;
  const columns = columnsOf(data);
  return columns.find((c) => !isNumericColumn(data.rows, c)) ?? columns[0];
}

/** Value columns: mapped, else every numeric column except the ones given. */
function valueColumns(data: ChartData, mappings: Mappings, keys: string[], exclude: (string | undefined)[]): string[] {
  const chosen = mapped(mappings, ...keys);
  if (chosen.length > 0) return chosen;
  return columnsOf(data).filter((c) => !exclude.includes(c) && isNumericColumn(data.rows, c));
}

const WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];

function weekdayIndex(value: unknown): number {
  return typeof value === "string" ? WEEKDAYS.indexOf(value.trim().slice(0, 3).toLowerCase()) : -1;
}

/**
 * Distinct categories in row order, except that dates, months, numbers and weekday names are
 * put in their natural order (grouped queries come back in no particular order).
 */
export function orderedCategories(values: unknown[]): string[] {
  const distinct = [...new Set(values.filter((v) => v !== undefined).map((v) => (v === null ? "(none)" : String(v))))];
  if (distinct.length > 1 && distinct.every((v) => /^\d{4}-\d{2}(-\d{2})?([T ][\d:.]+Z?)?$/.test(v))) return distinct.sort();
  if (distinct.length > 1 && distinct.every((v) => toNumber(v) !== null)) return distinct.sort((a, b) => Number(a) - Number(b));
  if (distinct.length > 1 && distinct.every((v) => weekdayIndex(v) >= 0 && v.length <= 9)) return distinct.sort((a, b) => weekdayIndex(a) - weekdayIndex(b));
  return distinct;
}

function key(value: unknown): string {
  return value === null || value === undefined ? "(none)" : String(value);
}

function seriesTemplates(base: EchartsOption): Obj[] {
  const series = base.series;
  if (Array.isArray(series)) return series.filter(isObject);
  return isObject(series) ? [series] : [];
}

function templateAt(templates: Obj[], index: number, type: SeriesType): Obj {
  const template = templates[Math.min(index, templates.length - 1)] ?? {};
  return { ...template, type: template.type ?? type };
}

/** The chart kind: the first base series' type, else guessed from the mappings. */
export function chartType(base: EchartsOption, mappings: Mappings): SeriesType {
  const type = seriesTemplates(base)[0]?.type;
  if (typeof type === "string" && (SERIES_TYPES as readonly string[]).includes(type)) return type as SeriesType;
  if (mappings?.indicator || isObject(base.radar)) return "radar";
  if ((mappings?.label || mappings?.name) && mappings?.value && !mappings?.x) return "pie";
  return "bar";
}

function tooltipValue(value: unknown): string {
  const values = Array.isArray(value) ? value : [value];
  return values.map((v) => (typeof v === "number" ? formatNumber(v) : v === null || v === undefined ? "–" : String(v))).join(", ");
}

/** Tooltip text for a value of `column`: its declared format when it has one (as tiles and tables show it). */
function columnValue(context: ChartContext, column: string | undefined): (value: unknown) => string {
  const declared = column === undefined ? undefined : context.formats?.[column];
  if (declared === undefined) return tooltipValue;
  const format = resolveFormat(declared);
  return (value) => {
    const n = toNumber(value);
    return n === null ? tooltipValue(value) : formatValue(n, format);
  };
}

/** A value for an HTML tooltip built here (ECharts escapes valueFormatter output itself, so tooltipValue stays raw). */
function htmlValue(value: unknown): string {
  return escapeHtml(tooltipValue(value));
}

/** The base tooltip with a number formatter added unless the base brings its own. */
function tooltip(base: EchartsOption, trigger: "axis" | "item", extra: Obj = {}): Obj {
  const given = isObject(base.tooltip) ? base.tooltip : {};
  return { trigger, confine: true, valueFormatter: tooltipValue, ...extra, ...given };
}

function axis(given: unknown, defaults: Obj): Obj {
  const own = isObject(given) ? given : {};
  const axisLabel = { ...(isObject(defaults.axisLabel) ? defaults.axisLabel : {}), ...(isObject(own.axisLabel) ? own.axisLabel : {}) };
  return { ...defaults, ...own, axisLabel };
}

const valueAxisLabel = { formatter: (v: number) => formatCompact(v), hideOverlap: true };

/** Room a value axis' labels and the grid's margins take beside the plot (compact figures such as "1.2M"). */
const VALUE_AXIS_ROOM = 64;

/** Lines of `text` wrapped at spaces within `width` (a word wider than the width is a line of its own). */
function wrappedLines(text: string, width: number, measure: (text: string) => number): string[] {
  const lines: string[] = [];
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const last = lines.at(-1);
    if (last !== undefined && measure(`${last} ${word}`) <= width) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines;
}

/** Whether every label wraps, at its spaces, into at most two lines no wider than `width`. */
function wrapsInTwo(labels: readonly string[], width: number, measure: (text: string) => number): boolean {
  return labels.every((label) => {
    const lines = wrappedLines(label, width, measure);
    return lines.length <= 2 && lines.every((line) => measure(line) <= width);
  });
}

/**
 * Labels of a category axis along the bottom, for the box the chart has. Every label is shown whole
 * (`interval: 0`, never cut): straight when the widest fits its slot; else wrapped at spaces on two
 * lines when that fits; else turned by the smallest angle (30°, 45°, 60°, 90°) at which neighbours
 * no longer touch and the turned label takes at most 40% of the height (60% upright at 90°); in a
 * small box the same at 10 px, then 9 px. Only when none of that fits (dozens of categories on a phone,
 * names longer than the chart is tall) are labels left out (ECharts keeps those it has room for)
 * and cut, each whole in the axis' tooltip.
 */
export function bottomCategoryLabels(labels: readonly string[], context: ChartContext): Obj {
  const box = context.box;
  if (!box || labels.length === 0) return { hideOverlap: true };
  const slot = Math.max(1, box.width - VALUE_AXIS_ROOM) / labels.length;
  const measure = context.measureText ?? estimateTextWidth;
  for (const fontSize of [12, ...SMALL_LABELS]) {
    const scale = fontSize / 12;
    const scaled = (text: string) => measure(text) * scale;
    const line = LABEL_LINE * scale;
    const size = fontSize === 12 ? {} : { fontSize };
    const longest = widest(labels, context) * scale;
    if (longest + 6 <= slot) return { interval: 0, rotate: 0, hideOverlap: false, ...size };
    if (slot >= 40 && 2 * line <= box.height * 0.3 && wrapsInTwo(labels, slot - 6, scaled)) {
      return { interval: 0, rotate: 0, hideOverlap: false, width: Math.floor(slot - 6), overflow: "break", lineHeight: line, ...size };
    }
    for (const rotate of [30, 45, 60, 90]) {
      const sin = Math.sin((rotate * Math.PI) / 180);
      if (slot * sin < line) continue;
      if (longest * sin <= box.height * (rotate === 90 ? UPRIGHT_ROOM : 0.4)) return { interval: 0, rotate, hideOverlap: false, ...size };
    }
  }
  // Nothing fits whole: upright small labels, as many as ECharts finds room for, cut at the room they may take and
  // whole in the axis' tooltip (categoryAxis).
  return { interval: "auto", rotate: 90, hideOverlap: false, fontSize: SMALL_LABELS.at(-1), width: Math.floor(box.height * UPRIGHT_ROOM), overflow: "truncate" };
}

/**
 * Labels of a category axis along the side (horizontal bars, heatmap rows): whole when the widest
 * takes at most 35% of the width; else wrapped at spaces on two lines of that width when the rows
 * are two lines apart; else cut there, with the whole label in a tooltip (the axis' `tooltip`,
 * see categoryAxis). Every one is shown while the rows are a line apart.
 */
function sideCategoryLabels(labels: readonly string[], context: ChartContext): Obj {
  const box = context.box;
  if (!box || labels.length === 0) return { hideOverlap: true };
  const room = Math.max(48, Math.floor(box.width * 0.35));
  const rowHeight = (box.height - 40) / labels.length;
  const dense = rowHeight < LABEL_LINE;
  const shown = { interval: dense ? "auto" : 0, hideOverlap: dense };
  if (widest(labels, context) <= room) return shown;
  if (rowHeight >= 2 * LABEL_LINE && wrapsInTwo(labels, room, context.measureText ?? estimateTextWidth)) return { ...shown, width: room, overflow: "break", lineHeight: 14 };
  return { ...shown, width: room, overflow: "truncate" };
}

/** A category axis with its labels; labels that may be cut carry a tooltip with the whole text (ECharts' axis tooltip). */
function categoryAxis(given: unknown, defaults: Obj): Obj {
  const built = axis(given, defaults);
  const label = built.axisLabel as Obj;
  return label.overflow === "truncate" && built.tooltip === undefined ? { ...built, tooltip: { show: true } } : built;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
/** A calendar date, alone or at midnight UTC, as grouped SQL returns days, weeks and months (`2026-10`, `2026-10-05T00:00:00Z`). */
const CALENDAR_DATE = /^(\d{4})-(\d{2})(?:-(\d{2}))?(?:[T ]00:00(?::00(?:\.0+)?)?(?:Z|[+-]00(?::?00)?)?)?$/;
const DAY_MS = 86_400_000;

/** The ISO 8601 week of a UTC date, and the year it belongs to. */
function isoWeek(date: Date): { week: number; year: number } {
  const thursday = new Date(date.getTime() + (3 - ((date.getUTCDay() + 6) % 7)) * DAY_MS);
  const firstThursday = Date.UTC(thursday.getUTCFullYear(), 0, 4);
  return { week: 1 + Math.round((thursday.getTime() - firstThursday) / DAY_MS / 7 - 0.5 + ((new Date(firstThursday).getUTCDay() + 6) % 7) / 7), year: thursday.getUTCFullYear() };
}

export type TimeGrain = "day" | "week" | "month";

/**
 * Categories that are calendar dates, with the grain they step by and their labels in words: months
 * ("Oct 2026"), weeks (same weekday, whole weeks apart: "Week 41", with the year when they span
 * two) or days ("Oct 1", with the year when they span two). Null when they are not all dates.
 */
export function timeCategories(categories: readonly string[]): { grain: TimeGrain; label: (category: string) => string } | null {
  if (categories.length < 2) return null;
  const dates: Date[] = [];
  let monthly = true;
  for (const category of categories) {
    const match = CALENDAR_DATE.exec(category);
    if (!match) return null;
    const [, year, month, day] = match;
    if (day !== undefined && day !== "01") monthly = false;
    dates.push(new Date(Date.UTC(Number(year), Number(month) - 1, Number(day ?? 1))));
  }
  const times = dates.map((d) => d.getTime());
  const byCategory = new Map(categories.map((c, i) => [c, dates[i]]));
  const at = (category: string) => byCategory.get(category) ?? dates[0];
  if (monthly) return { grain: "month", label: (c) => `${MONTHS[at(c).getUTCMonth()]} ${at(c).getUTCFullYear()}` };
  const sorted = [...times].sort((a, b) => a - b);
  const weekly = sorted.every((t, i) => i === 0 || (t - sorted[i - 1]) % (7 * DAY_MS) === 0);
  if (weekly) {
    const years = new Set(dates.map((d) => isoWeek(d).year));
    return { grain: "week", label: (c) => (years.size > 1 ? `Week ${isoWeek(at(c)).week}, ${isoWeek(at(c)).year}` : `Week ${isoWeek(at(c)).week}`) };
  }
  const years = new Set(dates.map((d) => d.getUTCFullYear()));
  return { grain: "day", label: (c) => `${MONTHS[at(c).getUTCMonth()]} ${at(c).getUTCDate()}${years.size > 1 ? `, ${at(c).getUTCFullYear()}` : ""}` };
}

/**
 * Labels of a date axis: in words for their grain, straight, as many as fit their width evenly
 * spaced (every n-th, starting with the first). Without a box ECharts leaves out what overlaps.
 */
function timeAxisLabels(categories: readonly string[], label: (category: string) => string, context: ChartContext): Obj {
  const formatter = (value: string) => label(value);
  const box = context.box;
  if (!box) return { formatter, hideOverlap: true };
  const slot = Math.max(1, box.width - VALUE_AXIS_ROOM) / categories.length;
  const step = Math.max(1, Math.ceil((widest(categories.map(label), context) + 12) / slot));
  return { formatter, interval: step - 1, rotate: 0, hideOverlap: false };
}

/** Margins inside which the plot, its axis labels and axis names all fit (ECharts 6 outer bounds), so nothing is cut at the card's edge. */
function grid(base: EchartsOption, legend: boolean, bottom = 8): Obj {
  return isObject(base.grid) ? base.grid : { left: 8, right: 16, top: legend ? 40 : 16, bottom, outerBoundsMode: "same", outerBoundsContain: "all" };
}

function legendFor(base: EchartsOption, show: boolean, position: Obj = { top: 0 }): Obj | undefined {
  if (base.legend !== undefined) return base.legend as Obj;
  return show ? { type: "scroll", ...position } : undefined;
}

function sum(rows: Row[], column: string): number | null {
  let total: number | null = null;
  for (const row of rows) {
    const n = toNumber(row[column]);
    if (n !== null) total = (total ?? 0) + n;
  }
  return total;
}

function groupBy(rows: Row[], column: string | undefined): Map<string, Row[]> {
  const groups = new Map<string, Row[]>();
  for (const row of rows) {
    const k = column ? key(row[column]) : "";
    const list = groups.get(k);
    if (list) list.push(row);
    else groups.set(k, [row]);
  }
  return groups;
}

function cartesian(base: EchartsOption, mappings: Mappings, data: ChartData, type: "line" | "bar", context: ChartContext): EchartsOption {
  const x = categoryColumn(data, mappings, ["x", "category", "label", "name"]);
  const [split] = mapped(mappings, "series");
  const ys = valueColumns(data, mappings, ["y", "value", "values"], [x, split]);
  const templates = seriesTemplates(base);
  const xAxisGiven = isObject(base.xAxis) ? base.xAxis : {};
  const yAxisGiven = isObject(base.yAxis) ? base.yAxis : {};
  const horizontal = yAxisGiven.type === "category" && xAxisGiven.type !== "category";
  const categoryAxisGiven = horizontal ? yAxisGiven : xAxisGiven;
  const pairs = ["value", "time", "log"].includes(String(categoryAxisGiven.type));
  const categories = pairs || !x ? [] : orderedCategories(data.rows.map((r) => r[x]));
  const groups = groupBy(data.rows, split);

  const series: Obj[] = [];
  for (const [groupKey, rows] of groups) {
    for (const y of ys) {
      const name = split ? (ys.length > 1 ? `${groupKey} · ${humanize(y)}` : groupKey) : humanize(y);
      let values: unknown[];
      if (pairs && x) {
        values = rows
          .map((r) => [r[x], toNumber(r[y])])
          .sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : String(a[0]) > String(b[0]) ? 1 : 0));
      } else {
        const byCategory = groupBy(rows, x);
        values = categories.map((c) => sum(byCategory.get(c) ?? [], y));
      }
      const declared = context.formats?.[y] !== undefined ? { tooltip: { valueFormatter: columnValue(context, y) } } : {};
      series.push({ name, ...declared, ...templateAt(templates, series.length, type), data: horizontal && pairs ? values.map((v) => (v as unknown[]).slice().reverse()) : values });
    }
  }
  const legend = legendFor(base, series.length > 1);
  const dates = horizontal ? null : timeCategories(categories);
  const categoryLabels = dates ? timeAxisLabels(categories, dates.label, context) : horizontal ? sideCategoryLabels(categories, context) : bottomCategoryLabels(categories, context);
  const categoryAxisOption = pairs ? axis(categoryAxisGiven, { type: categoryAxisGiven.type }) : categoryAxis(categoryAxisGiven, { type: "category", data: categories, axisLabel: categoryLabels });
  const valueAxis = axis(horizontal ? xAxisGiven : yAxisGiven, { type: "value", axisLabel: valueAxisLabel });
  return {
    ...base,
    tooltip: tooltip(base, "axis"),
    grid: grid(base, legend !== undefined),
    ...(legend ? { legend } : {}),
    xAxis: horizontal ? valueAxis : categoryAxisOption,
    yAxis: horizontal ? categoryAxisOption : valueAxis,
    series,
  };
}

function scatter(base: EchartsOption, mappings: Mappings, data: ChartData, context: ChartContext): EchartsOption {
  const numeric = columnsOf(data).filter((c) => isNumericColumn(data.rows, c));
  const [x = numeric[0]] = mapped(mappings, "x");
  const [y = numeric.find((c) => c !== x)] = mapped(mappings, "y", "value");
  const [label] = mapped(mappings, "label", "name");
  const [split] = mapped(mappings, "series");
  const templates = seriesTemplates(base);
  const xAxisGiven = isObject(base.xAxis) ? base.xAxis : {};
  const categoryX = xAxisGiven.type === "category";
  const categories = categoryX && x ? orderedCategories(data.rows.map((r) => r[x])) : [];
  // A point's label reads towards the middle of the plot (left-aligned on its left half, right-aligned on its right
  // half), so the outermost labels stay inside the plot, clear of the value axis' labels.
  const xs = categoryX ? [] : data.rows.map((r) => toNumber(x ? r[x] : null)).filter((n): n is number => n !== null);
  const middle = xs.length > 0 ? (Math.min(...xs) + Math.max(...xs)) / 2 : 0;
  const inward = (vx: unknown, index: number, count: number) => {
    const left = categoryX ? index < count / 2 : typeof vx === "number" && vx < middle;
    return { label: { align: left ? "left" : "right" } };
  };
  const series: Obj[] = [];
  for (const [groupKey, rows] of groupBy(data.rows, split)) {
    const template = templateAt(templates, series.length, "scatter");
    const ownLabel = label !== undefined && template.label === undefined;
    series.push({
      name: split ? groupKey : humanize(y ?? "value"),
      ...(ownLabel ? { label: { show: true, position: "top", formatter: "{b}" } } : {}),
      // A series option (ECharts reads no top-level labelLayout): point labels that would overlap another are hidden.
      labelLayout: { hideOverlap: true },
      ...template,
      data: rows.map((r, i) => {
        const vx = categoryX ? key(x ? r[x] : null) : toNumber(x ? r[x] : null);
        return {
          ...(label ? { name: key(r[label]) } : {}),
          value: [vx, toNumber(y ? r[y] : null)],
          ...(ownLabel ? inward(vx, i, rows.length) : {}),
        };
      }),
    });
  }
  const legend = legendFor(base, series.length > 1);
  const describe = (params: { name?: string; value?: unknown }) => {
    const [vx, vy] = Array.isArray(params.value) ? params.value : [];
    const lines = [`${escapeHtml(humanize(x ?? "x"))}: ${escapeHtml(columnValue(context, x)(vx))}`, `${escapeHtml(humanize(y ?? "y"))}: ${escapeHtml(columnValue(context, y)(vy))}`];
    return [params.name ? `<b>${escapeHtml(params.name)}</b>` : "", ...lines].filter(Boolean).join("<br/>");
  };
  return {
    ...base,
    tooltip: tooltip(base, "item", { formatter: describe }),
    grid: grid(base, legend !== undefined),
    ...(legend ? { legend } : {}),
    xAxis: axis(base.xAxis, categoryX ? { type: "category", data: categories } : { type: "value", scale: true, axisLabel: valueAxisLabel }),
    yAxis: axis(base.yAxis, { type: "value", scale: true, axisLabel: valueAxisLabel }),
    series,
  };
}

/** A radius as ECharts reads it (a number of pixels or a percentage of half the smaller side), in pixels. */
function radiusPx(radius: unknown, half: number): number | null {
  if (typeof radius === "number") return radius;
  const percent = typeof radius === "string" ? /^\s*(\d+(?:\.\d+)?)%\s*$/.exec(radius) : null;
  return percent ? (Number(percent[1]) / 100) * half : null;
}

/** Room a pie's outside label needs beyond the slice: its label line (15 + 15 px), the gap to the text (5 px), ECharts' bleed margin at the edge (10 px) and a little air. */
const PIE_LABEL_LINE = 56;

/**
 * A pie's radius for its box: the base's (or `fallback`) unless the outside labels would not fit
 * beside it, then shrunk, inner radius in proportion, so the widest label is never cut. Below a
 * readable size (a 36 px outer radius) labels give way to the legend instead. Null without a box.
 */
function pieFit(radius: unknown, labels: readonly string[], legend: boolean, context: ChartContext): { radius: unknown; labels: boolean } | null {
  const box = context.box;
  if (!box) return null;
  const height = box.height - (legend ? 28 : 0);
  const half = Math.min(box.width, height) / 2;
  const [inner, outer] = Array.isArray(radius) ? radius : [0, radius];
  const outerPx = radiusPx(outer, half) ?? 0.65 * half;
  const innerPx = radiusPx(inner, half) ?? 0;
  const fits = Math.min(box.width / 2 - widest(labels, context) - PIE_LABEL_LINE, height / 2 - 24);
  if (outerPx <= fits) return { radius, labels: true };
  if (fits < 36) return { radius, labels: false };
  return { radius: innerPx > 0 ? [Math.round((innerPx / outerPx) * fits), Math.floor(fits)] : Math.floor(fits), labels: true };
}

function pie(base: EchartsOption, mappings: Mappings, data: ChartData, context: ChartContext): EchartsOption {
  const name = categoryColumn(data, mappings, ["label", "name", "x", "category"]);
  const [value] = valueColumns(data, mappings, ["value", "y"], [name]);
  const template = templateAt(seriesTemplates(base), 0, "pie");
  const slices = [...groupBy(data.rows, name)].map(([label, rows]) => ({ name: label, value: value ? sum(rows, value) : null }));
  const describe = (params: { name?: string; value?: unknown; percent?: number }) =>
    `<b>${escapeHtml(params.name ?? "")}</b><br/>${escapeHtml(columnValue(context, value)(params.value))} (${formatNumber(params.percent ?? 0, 1)}%)`;
  const { xAxis: _x, yAxis: _y, ...rest } = base;
  const legend = legendFor(base, true, { bottom: 0 });
  const labelGiven = isObject(template.label) ? template.label : {};
  const fit = labelGiven.show === false || labelGiven.position === "inside" || labelGiven.position === "center" ? null : pieFit(template.radius ?? "65%", slices.map((s) => s.name), legend !== undefined, context);
  return {
    ...rest,
    tooltip: tooltip(rest, "item", { formatter: describe }),
    legend,
    series: [
      {
        name: humanize(value ?? "value"),
        radius: "65%",
        center: ["50%", "45%"],
        ...template,
        ...(fit ? { radius: fit.radius, label: { ...labelGiven, show: fit.labels } } : {}),
        data: slices,
      },
    ],
  };
}

/** A round upper bound above `value` (1, 2, 2.5, 5 × a power of ten). */
export function niceMax(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  const step = [1, 2, 2.5, 5, 10].find((s) => s * power >= value) ?? 10;
  return step * power;
}

/** Tick-label steps a gauge may take (0–100 in 10, 5, 4 or 2 parts), finest first. */
const GAUGE_SPLITS = [10, 5, 4, 2];

/**
 * A gauge laid out for its box, so its texts never collide: as many tick labels as the arc has room
 * for (a label and a gap per step), the figure sized to the dial and set below the ends of the
 * scale (the "0" and "100" labels sit low on either side), the name below the figure.
 */
function gaugeFit(template: Obj, max: unknown, context: ChartContext): Obj {
  const box = context.box;
  if (!box || template.radius !== undefined || template.center !== undefined) return {};
  const radius = 0.75 * (Math.min(box.width, box.height) / 2);
  // Labels sit inside the 12 px ring, 16 px in; their centres a half-label further.
  const labelRadius = Math.max(8, radius - 12 - 16 - 10);
  const widestTick = estimateTextWidth(String(typeof max === "number" ? formatCompact(max) : "100")) + 10;
  const splitNumber = GAUGE_SPLITS.find((n) => ((labelRadius * 1.5 * Math.PI) / n) >= widestTick) ?? 2;
  const detailSize = Math.round(Math.min(30, Math.max(14, radius * 0.22)));
  // The end labels' lower edge: 45° below the centre, half a line further.
  const endLabels = labelRadius * Math.SQRT1_2 + 8;
  const detailY = Math.round(endLabels + 4 + detailSize / 2);
  return {
    radius,
    splitNumber,
    detail: { fontSize: detailSize, offsetCenter: [0, detailY] },
    title: { fontSize: 12, offsetCenter: [0, Math.round(detailY + detailSize / 2 + 12)] },
  };
}

function gauge(base: EchartsOption, mappings: Mappings, data: ChartData, context: ChartContext): EchartsOption {
  const [value] = valueColumns(data, mappings, ["value", "y"], []);
  const [label] = mapped(mappings, "label", "name");
  const template = templateAt(seriesTemplates(base), 0, "gauge");
  const row = data.rows[0] ?? {};
  const figure = value ? toNumber(row[value]) : null;
  const max = template.max ?? (figure !== null && figure > 100 ? niceMax(figure) : 100);
  const fit = gaugeFit(template, max, context);
  const own = (part: string) => (isObject(template[part]) ? template[part] : {});
  return {
    ...base,
    tooltip: tooltip(base, "item"),
    series: [
      {
        progress: { show: true, width: 12 },
        axisLine: { lineStyle: { width: 12 } },
        axisTick: { show: false },
        splitLine: { length: 8 },
        axisLabel: { distance: 16 },
        pointer: { width: 4 },
        title: { offsetCenter: [0, "70%"] },
        ...template,
        ...(fit.radius !== undefined ? { radius: fit.radius, splitNumber: template.splitNumber ?? fit.splitNumber, title: { ...(fit.title as Obj), ...own("title") } } : {}),
        max,
        detail: { valueAnimation: true, offsetCenter: [0, "40%"], formatter: (v: number) => formatNumber(v, 1), ...(fit.detail as Obj | undefined), ...own("detail") },
        data: [{ value: figure, name: label ? key(row[label]) : humanize(value ?? "") }],
      },
    ],
  };
}

function heatmap(base: EchartsOption, mappings: Mappings, data: ChartData, context: ChartContext): EchartsOption {
  const columns = columnsOf(data);
  const text = columns.filter((c) => !isNumericColumn(data.rows, c));
  const [x = text[0]] = mapped(mappings, "x");
  const [y = text.find((c) => c !== x)] = mapped(mappings, "y");
  const [value] = valueColumns(data, mappings, ["value"], [x, y]);
  const xs = x ? orderedCategories(data.rows.map((r) => r[x])) : [];
  const ys = y ? orderedCategories(data.rows.map((r) => r[y])) : [];
  const cells = new Map<string, number | null>();
  for (const row of data.rows) {
    const k = JSON.stringify([key(x ? row[x] : null), key(y ? row[y] : null)]);
    const n = value ? toNumber(row[value]) : null;
    cells.set(k, n === null ? (cells.get(k) ?? null) : (cells.get(k) ?? 0) + n);
  }
  const points: [number, number, number | null][] = [];
  const figures: number[] = [];
  for (const [k, n] of cells) {
    const [cx, cy] = JSON.parse(k) as [string, string];
    points.push([xs.indexOf(cx), ys.indexOf(cy), n]);
    if (n !== null) figures.push(n);
  }
  const given = isObject(base.visualMap) ? base.visualMap : {};
  const low = typeof given.min === "number" ? given.min : figures.length ? Math.min(...figures) : 0;
  let high = typeof given.max === "number" ? given.max : figures.length ? Math.max(...figures) : 1;
  if (high <= low) high = low + 1;
  const describe = (params: { value?: unknown }) => {
    const [ix, iy, n] = Array.isArray(params.value) ? params.value : [];
    return `${escapeHtml(xs[ix as number] ?? "")} · ${escapeHtml(ys[iy as number] ?? "")}<br/><b>${htmlValue(n)}</b>`;
  };
  return {
    ...base,
    tooltip: tooltip(base, "item", { formatter: describe }),
    // Room below the axis labels for the visual map and its handle labels.
    grid: grid(base, false, 80),
    xAxis: categoryAxis(base.xAxis, { type: "category", data: xs, splitArea: { show: true }, axisLabel: bottomCategoryLabels(xs, context) }),
    yAxis: categoryAxis(base.yAxis, { type: "category", data: ys, splitArea: { show: true }, axisLabel: sideCategoryLabels(ys, context) }),
    visualMap: { orient: "horizontal", left: "center", bottom: 0, itemHeight: 120, formatter: (v: number) => formatCompact(v), ...given, min: low, max: high },
    series: [
      {
        name: humanize(value ?? "value"),
        // Figures in the cells while they are few enough to read.
        label: { show: points.length <= 120, color: "#0f172a", formatter: (params: { value?: unknown }) => (Array.isArray(params.value) && typeof params.value[2] === "number" ? formatCompact(params.value[2]) : "") },
        ...templateAt(seriesTemplates(base), 0, "heatmap"),
        data: points,
      },
    ],
  };
}

function radar(base: EchartsOption, mappings: Mappings, data: ChartData, context: ChartContext): EchartsOption {
  const indicatorColumn = categoryColumn(data, mappings, ["indicator", "x", "label", "name", "category"]);
  const values = valueColumns(data, mappings, ["value", "values", "y"], [indicatorColumn]);
  const groups = [...groupBy(data.rows, indicatorColumn)];
  const names = groups.map(([name]) => name);
  const raw = values.map((column) => groups.map(([, rows]) => sum(rows, column)));
  const shared = values.length > 1;
  const overall = Math.max(0, ...raw.flat().map((v) => v ?? 0));
  const items = values.map((column, i) => {
    const own = Math.max(0, ...raw[i].map((v) => v ?? 0));
    return {
      name: humanize(column),
      raw: raw[i],
      value: shared ? raw[i].map((v) => (v === null || own === 0 ? null : (v / own) * 100)) : raw[i],
    };
  });
  const describe = (params: { data?: { name?: string; raw?: (number | null)[] } }) => {
    const item = params.data;
    const column = values.find((c) => humanize(c) === item?.name);
    const lines = names.map((n, i) => `${escapeHtml(n)}: ${escapeHtml(columnValue(context, column)(item?.raw?.[i] ?? null))}`);
    return [`<b>${escapeHtml(item?.name ?? "")}</b>`, ...lines].join("<br/>");
  };
  const givenRadar = isObject(base.radar) ? base.radar : {};
  const legend = legendFor(base, shared, { bottom: 0 });
  // The indicator names sit outside the polygon: on a narrow box the radius leaves them room beside it.
  const box = context.box;
  const height = box ? box.height - (legend ? 28 : 0) : 0;
  const fitted = box ? Math.floor(Math.min(height / 2 - 2 * LABEL_LINE, box.width / 2 - widest(names, context) - 12)) : null;
  const radius = fitted === null || givenRadar.radius !== undefined ? undefined : Math.min(Math.max(fitted, 24), Math.floor(0.62 * Math.min(box!.width, height) / 2));
  return {
    ...base,
    tooltip: tooltip(base, "item", { formatter: describe }),
    ...(legend ? { legend } : {}),
    radar: {
      radius: radius ?? "62%",
      center: ["50%", box && legend ? `${Math.round((height / 2 / box.height) * 100)}%` : "48%"],
      ...givenRadar,
      indicator: givenRadar.indicator ?? names.map((name) => ({ name, max: shared ? 100 : niceMax(overall), min: 0 })),
    },
    series: [{ ...templateAt(seriesTemplates(base), 0, "radar"), data: items }],
  };
}

/**
 * Tooltips render as HTML: every text the formatters below put into it goes through here, since
 * names and values come from data (SQL rows can hold markup). ECharts escapes its own default
 * tooltip and template substitutions itself.
 */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);
}

/** The complete option for one widget; `base` is not modified. */
export function buildEchartsOption(base: EchartsOption | undefined, mappings: Mappings, data: ChartData, context: ChartContext = {}): EchartsOption {
  // Options stored before the manifest allow-list lose the parts that could carry script.
  const own = withoutUnsafeParts(base ?? {});
  const type = chartType(own, mappings);
  switch (type) {
    case "line":
    case "bar":
      return cartesian(own, mappings, data, type, context);
    case "scatter":
      return scatter(own, mappings, data, context);
    case "pie":
      return pie(own, mappings, data, context);
    case "gauge":
      return gauge(own, mappings, data, context);
    case "heatmap":
      return heatmap(own, mappings, data, context);
    case "radar":
      return radar(own, mappings, data, context);
  }
}
