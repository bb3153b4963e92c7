import { CHART_TYPES, withoutUnsafeParts } from "@/lib/manifest/echarts-option";
import { formatCompact, formatNumber, humanize, toNumber } from "./format";

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
 * Everything the base option sets explicitly wins over the defaults added here.
 */
export type EchartsOption = Record<string, unknown>;
export type Mappings = Record<string, string | string[]> | undefined;

export interface ChartData {
  columns: string[];
  rows: Record<string, unknown>[];
}

type Row = Record<string, unknown>;
type Obj = Record<string, unknown>;

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

function cartesian(base: EchartsOption, mappings: Mappings, data: ChartData, type: "line" | "bar"): EchartsOption {
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
      series.push({ name, ...templateAt(templates, series.length, type), data: horizontal && pairs ? values.map((v) => (v as unknown[]).slice().reverse()) : values });
    }
  }
  const legend = legendFor(base, series.length > 1);
  const categoryAxis = axis(categoryAxisGiven, pairs ? { type: categoryAxisGiven.type } : { type: "category", data: categories, axisLabel: { hideOverlap: true, overflow: "truncate", width: 110 } });
  const valueAxis = axis(horizontal ? xAxisGiven : yAxisGiven, { type: "value", axisLabel: valueAxisLabel });
  return {
    ...base,
    tooltip: tooltip(base, "axis"),
    grid: grid(base, legend !== undefined),
    ...(legend ? { legend } : {}),
    xAxis: horizontal ? valueAxis : categoryAxis,
    yAxis: horizontal ? categoryAxis : valueAxis,
    series,
  };
}

function scatter(base: EchartsOption, mappings: Mappings, data: ChartData): EchartsOption {
  const numeric = columnsOf(data).filter((c) => isNumericColumn(data.rows, c));
  const [x = numeric[0]] = mapped(mappings, "x");
  const [y = numeric.find((c) => c !== x)] = mapped(mappings, "y", "value");
  const [label] = mapped(mappings, "label", "name");
  const [split] = mapped(mappings, "series");
  const templates = seriesTemplates(base);
  const xAxisGiven = isObject(base.xAxis) ? base.xAxis : {};
  const categoryX = xAxisGiven.type === "category";
  const categories = categoryX && x ? orderedCategories(data.rows.map((r) => r[x])) : [];
  const series: Obj[] = [];
  for (const [groupKey, rows] of groupBy(data.rows, split)) {
    const template = templateAt(templates, series.length, "scatter");
    series.push({
      name: split ? groupKey : humanize(y ?? "value"),
      ...(label && template.label === undefined ? { label: { show: true, position: "top", formatter: "{b}" } } : {}),
      ...template,
      data: rows.map((r) => ({
        ...(label ? { name: key(r[label]) } : {}),
        value: [categoryX ? key(x ? r[x] : null) : toNumber(x ? r[x] : null), toNumber(y ? r[y] : null)],
      })),
    });
  }
  const legend = legendFor(base, series.length > 1);
  const describe = (params: { name?: string; value?: unknown }) => {
    const [vx, vy] = Array.isArray(params.value) ? params.value : [];
    const lines = [`${escapeHtml(humanize(x ?? "x"))}: ${htmlValue(vx)}`, `${escapeHtml(humanize(y ?? "y"))}: ${htmlValue(vy)}`];
    return [params.name ? `<b>${escapeHtml(params.name)}</b>` : "", ...lines].filter(Boolean).join("<br/>");
  };
  // Point labels are not part of ECharts' outer bounds; side margins keep the outermost ones readable.
  const labelled = series.some((s) => isObject(s.label) && s.label.show === true);
  const plotGrid = grid(base, legend !== undefined);
  return {
    ...base,
    tooltip: tooltip(base, "item", { formatter: describe }),
    grid: labelled && !isObject(base.grid) ? { ...plotGrid, left: 56, right: 56 } : plotGrid,
    ...(legend ? { legend } : {}),
    labelLayout: base.labelLayout ?? { hideOverlap: true },
    xAxis: axis(base.xAxis, categoryX ? { type: "category", data: categories } : { type: "value", scale: true, axisLabel: valueAxisLabel }),
    yAxis: axis(base.yAxis, { type: "value", scale: true, axisLabel: valueAxisLabel }),
    series,
  };
}

function pie(base: EchartsOption, mappings: Mappings, data: ChartData): EchartsOption {
  const name = categoryColumn(data, mappings, ["label", "name", "x", "category"]);
  const [value] = valueColumns(data, mappings, ["value", "y"], [name]);
  const template = templateAt(seriesTemplates(base), 0, "pie");
  const slices = [...groupBy(data.rows, name)].map(([label, rows]) => ({ name: label, value: value ? sum(rows, value) : null }));
  const describe = (params: { name?: string; value?: unknown; percent?: number }) =>
    `<b>${escapeHtml(params.name ?? "")}</b><br/>${htmlValue(params.value)} (${formatNumber(params.percent ?? 0, 1)}%)`;
  const { xAxis: _x, yAxis: _y, ...rest } = base;
  return {
    ...rest,
    tooltip: tooltip(rest, "item", { formatter: describe }),
    legend: legendFor(base, true, { bottom: 0 }),
    series: [{ name: humanize(value ?? "value"), radius: "65%", center: ["50%", "45%"], ...template, data: slices }],
  };
}

/** A round upper bound above `value` (1, 2, 2.5, 5 × a power of ten). */
export function niceMax(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  const step = [1, 2, 2.5, 5, 10].find((s) => s * power >= value) ?? 10;
  return step * power;
}

function gauge(base: EchartsOption, mappings: Mappings, data: ChartData): EchartsOption {
  const [value] = valueColumns(data, mappings, ["value", "y"], []);
  const [label] = mapped(mappings, "label", "name");
  const template = templateAt(seriesTemplates(base), 0, "gauge");
  const row = data.rows[0] ?? {};
  const figure = value ? toNumber(row[value]) : null;
  const max = template.max ?? (figure !== null && figure > 100 ? niceMax(figure) : 100);
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
        max,
        detail: { valueAnimation: true, offsetCenter: [0, "40%"], formatter: (v: number) => formatNumber(v, 1), ...(isObject(template.detail) ? template.detail : {}) },
        data: [{ value: figure, name: label ? key(row[label]) : humanize(value ?? "") }],
      },
    ],
  };
}

function heatmap(base: EchartsOption, mappings: Mappings, data: ChartData): EchartsOption {
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
    xAxis: axis(base.xAxis, { type: "category", data: xs, splitArea: { show: true } }),
    yAxis: axis(base.yAxis, { type: "category", data: ys, splitArea: { show: true } }),
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

function radar(base: EchartsOption, mappings: Mappings, data: ChartData): EchartsOption {
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
    const lines = names.map((n, i) => `${escapeHtml(n)}: ${htmlValue(item?.raw?.[i] ?? null)}`);
    return [`<b>${escapeHtml(item?.name ?? "")}</b>`, ...lines].join("<br/>");
  };
  const givenRadar = isObject(base.radar) ? base.radar : {};
  const legend = legendFor(base, shared, { bottom: 0 });
  return {
    ...base,
    tooltip: tooltip(base, "item", { formatter: describe }),
    ...(legend ? { legend } : {}),
    radar: {
      radius: "62%",
      center: ["50%", "48%"],
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
export function buildEchartsOption(base: EchartsOption | undefined, mappings: Mappings, data: ChartData): EchartsOption {
  // Options stored before the manifest allow-list lose the parts that could carry script.
  const own = withoutUnsafeParts(base ?? {});
  const type = chartType(own, mappings);
  switch (type) {
    case "line":
    case "bar":
      return cartesian(own, mappings, data, type);
    case "scatter":
      return scatter(own, mappings, data);
    case "pie":
      return pie(own, mappings, data);
    case "gauge":
      return gauge(own, mappings, data);
    case "heatmap":
      return heatmap(own, mappings, data);
    case "radar":
      return radar(own, mappings, data);
  }
}
