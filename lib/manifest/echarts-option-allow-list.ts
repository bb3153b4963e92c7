/**
 * What a manifest may put in `display.echarts.option`. ECharts turns some option strings into
 * HTML (tooltips) or navigations (`title.link`), so a free-form option is a stored-XSS channel
 * into every viewer's session. The option is therefore checked against an allow-list of keys per
 * chart type, formatter strings must be ECharts templates, and no string may carry markup or a
 * script URL. Pure and dependency-free: the manifest schema validates with it, and the browser
 * re-checks options that were stored before these rules existed.
 */

export type OptionProblem = { path: (string | number)[]; message: string };

export const CHART_TYPES = ["line", "bar", "pie", "scatter", "heatmap", "gauge", "radar"] as const;
export type ChartType = (typeof CHART_TYPES)[number];

const COMMON_TOP = ["title", "legend", "tooltip", "color", "textStyle", "backgroundColor", "animation", "animationDuration", "animationEasing", "series", "aria"];
const CARTESIAN_TOP = ["grid", "xAxis", "yAxis", "dataZoom", "visualMap", "axisPointer"];

/** Top-level keys per chart type (the option's series types decide which apply). */
export const TOP_LEVEL_KEYS: Record<ChartType, readonly string[]> = {
  line: [...COMMON_TOP, ...CARTESIAN_TOP],
  bar: [...COMMON_TOP, ...CARTESIAN_TOP],
  scatter: [...COMMON_TOP, ...CARTESIAN_TOP],
  heatmap: [...COMMON_TOP, "grid", "xAxis", "yAxis", "visualMap"],
  pie: [...COMMON_TOP],
  gauge: [...COMMON_TOP],
  radar: [...COMMON_TOP, "radar"],
};

const COMMON_SERIES = ["type", "name", "data", "label", "labelLine", "itemStyle", "emphasis", "blur", "select", "selectedMode", "tooltip", "z", "zlevel", "silent", "animation", "encode", "markLine", "markPoint", "markArea"];
const CARTESIAN_SERIES = ["xAxisIndex", "yAxisIndex", "stack", "symbol", "symbolSize", "showSymbol", "lineStyle", "areaStyle", "smooth", "step", "connectNulls", "sampling", "barWidth", "barMaxWidth", "barMinHeight", "barGap", "barCategoryGap", "showBackground", "backgroundStyle", "large", "endLabel", "colorBy"];

/** Keys of one series entry per type. */
export const SERIES_KEYS: Record<ChartType, readonly string[]> = {
  line: [...COMMON_SERIES, ...CARTESIAN_SERIES],
  bar: [...COMMON_SERIES, ...CARTESIAN_SERIES],
  scatter: [...COMMON_SERIES, ...CARTESIAN_SERIES],
  heatmap: [...COMMON_SERIES, "xAxisIndex", "yAxisIndex"],
  pie: [...COMMON_SERIES, "radius", "center", "roseType", "startAngle", "endAngle", "clockwise", "minAngle", "padAngle", "avoidLabelOverlap", "percentPrecision", "colorBy"],
  gauge: [...COMMON_SERIES, "radius", "center", "min", "max", "startAngle", "endAngle", "clockwise", "splitNumber", "axisLine", "progress", "splitLine", "axisTick", "axisLabel", "pointer", "anchor", "title", "detail"],
  radar: [...COMMON_SERIES, "radarIndex", "symbol", "symbolSize", "lineStyle", "areaStyle", "colorBy"],
};

/** Tooltips are the HTML surface: only these keys, never CSS text, class names or a render mode of the author's choosing. */
const TOOLTIP_KEYS = ["show", "trigger", "triggerOn", "axisPointer", "showContent", "alwaysShowContent", "showDelay", "hideDelay", "confine", "enterable", "position", "formatter", "backgroundColor", "borderColor", "borderWidth", "borderRadius", "padding", "textStyle", "order"];

/** Keys that never belong in a manifest, wherever they appear: raw CSS, DOM placement, HTML builders, navigations. */
const FORBIDDEN_KEYS = new Set(["extraCssText", "className", "appendTo", "appendToBody", "renderMode", "optionToContent", "contentToOption", "link", "sublink", "toolbox", "graphic", "html"]);

const TEMPLATE_TOKEN = /\{(?:[A-Za-z_]\w*|@[^{}<>|]+|[A-Za-z_]\w*\|[^{}<>]*)\}/g;

/** A formatter string is ECharts template text: `{b}`, `{c}`, `{value}`, `{@field}`, `{name|text}` rich refs, and plain text without markup. */
export function formatterProblem(value: string): string | null {
  // Rich references may hold plain references ({title|{b}}): remove the innermost first.
  let rest = value;
  for (let before = ""; before !== rest; ) [before, rest] = [rest, rest.replace(TEMPLATE_TOKEN, "")];
  if (/[<>]/.test(rest) || /[<>]/.test(value)) return "formatter may not contain HTML ('<' or '>'); use ECharts template text such as '{b}: {c}'";
  if (/[{}]/.test(rest)) return "formatter may only use ECharts template references: {a}, {b}, {c}, {d}, {value}, {@field} or {style|text}";
  return stringProblem(value);
}

/** Any string in an option: no tags and no script URLs (browsers ignore control characters inside a scheme). */
function stringProblem(value: string): string | null {
  if (/<\s*[A-Za-z!/?]/.test(value)) return "HTML is not allowed in chart options";
  const compact = value.replace(/[\u0000-\u0020]/g, "").toLowerCase();
  if (/(java|vb|live)script:|data:text\/html/.test(compact)) return "script URLs are not allowed in chart options";
  return null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** The chart types an option declares through its series; none declared: the line/bar default. */
function declaredTypes(option: Record<string, unknown>): ChartType[] {
  const series = Array.isArray(option.series) ? option.series : option.series !== undefined ? [option.series] : [];
  const types = series.filter(isObject).map((s) => s.type).filter((t): t is ChartType => typeof t === "string" && (CHART_TYPES as readonly string[]).includes(t));
  if (types.length > 0) return [...new Set(types)];
  return isObject(option.radar) ? ["radar"] : ["bar"];
}

/** Every problem of a base option, each with its path inside the option. */
export function echartsOptionProblems(option: Record<string, unknown>): OptionProblem[] {
  const problems: OptionProblem[] = [];
  const types = declaredTypes(option);
  const topAllowed = new Set(types.flatMap((t) => TOP_LEVEL_KEYS[t]));
  for (const key of Object.keys(option)) {
    if (!topAllowed.has(key)) problems.push({ path: [key], message: `'${key}' is not an allowed option for ${types.join("/")} charts; allowed: ${[...topAllowed].join(", ")}` });
  }
  const series = Array.isArray(option.series) ? option.series : option.series !== undefined ? [option.series] : [];
  series.forEach((entry, index) => {
    const at: (string | number)[] = Array.isArray(option.series) ? ["series", index] : ["series"];
    if (!isObject(entry)) return problems.push({ path: at, message: "a series must be an object" });
    const type = entry.type;
    if (type !== undefined && !(typeof type === "string" && (CHART_TYPES as readonly string[]).includes(type))) {
      return problems.push({ path: [...at, "type"], message: `series type must be one of ${CHART_TYPES.join(", ")}` });
    }
    const allowed = new Set(SERIES_KEYS[(type as ChartType | undefined) ?? types[0]]);
    for (const key of Object.keys(entry)) {
      if (!allowed.has(key)) problems.push({ path: [...at, key], message: `'${key}' is not an allowed series option for ${String(type ?? types[0])} charts` });
    }
  });
  walk(option, [], problems);
  // One message per offending part: nothing inside a key that is already refused.
  const refused = problems.map((p) => JSON.stringify(p.path).slice(0, -1));
  return problems.filter((p, index) => {
    const own = refused[index];
    return refused.indexOf(own) === index && !refused.some((r) => own !== r && own.startsWith(`${r},`));
  });
}

function walk(value: unknown, path: (string | number)[], problems: OptionProblem[]): void {
  if (typeof value === "string") {
    const key = path[path.length - 1];
    const problem = key === "formatter" || key === "valueFormatter" ? formatterProblem(value) : stringProblem(value);
    if (problem) problems.push({ path, message: problem });
    return;
  }
  if (Array.isArray(value)) return value.forEach((item, i) => walk(item, [...path, i], problems));
  if (!isObject(value)) return;
  const inTooltip = path[path.length - 1] === "tooltip";
  for (const [key, child] of Object.entries(value)) {
    if (FORBIDDEN_KEYS.has(key)) {
      problems.push({ path: [...path, key], message: `'${key}' is not allowed in chart options` });
      continue;
    }
    if (inTooltip && !TOOLTIP_KEYS.includes(key)) {
      problems.push({ path: [...path, key], message: `'${key}' is not an allowed tooltip option; allowed: ${TOOLTIP_KEYS.join(", ")}` });
      continue;
    }
    if ((key === "formatter" || key === "valueFormatter") && typeof child !== "string") {
      problems.push({ path: [...path, key], message: "formatter must be an ECharts template string" });
      continue;
    }
    walk(child, [...path, key], problems);
  }
}

/**
 * The option with every offending part removed, for options stored before these rules: the
 * viewer still draws the chart, without the parts that could carry script.
 */
export function withoutUnsafeParts(option: Record<string, unknown>): Record<string, unknown> {
  const copy = structuredClone(option);
  // Deepest paths first, so removing a parent never leaves a child path dangling.
  const paths = echartsOptionProblems(copy).map((p) => p.path).sort((a, b) => b.length - a.length);
  for (const path of paths) {
    let parent: unknown = copy;
    for (const segment of path.slice(0, -1)) parent = (parent as Record<string | number, unknown> | undefined)?.[segment];
    const last = path[path.length - 1];
    if (Array.isArray(parent) && typeof last === "number") parent[last] = null;
    else if (isObject(parent)) delete parent[last as string];
  }
  return copy;
}
