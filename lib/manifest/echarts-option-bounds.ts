/**
 * The sizes, positions and counts an ECharts option may hold (issue 41 §5). A pie 100,000,000 %
 * wide with a 1,000,000 px label is valid ECharts, but its geometry means nothing and made the
 * server's rasteriser (resvg) panic. Every key below that names a length, an angle or a count is
 * bounded: a number of pixels, a percent string, or one of the key's keywords, within the range
 * no real chart leaves. The manifest schema refuses what falls outside (with the value's path,
 * hence its line and column); the report renderer clamps options stored before this rule with
 * `withinBounds`, so both read the one table. Pure and dependency-free, like the allow-list.
 */

import type { OptionProblem } from "./echarts-option-allow-list";

interface Bound {
  /** Pixels (or degrees, or a count): the closed range a number must lie in. */
  px: [number, number];
  /** Percent strings ("65%") and their range; absent: no percent form. */
  percent?: [number, number];
  /** Words the key takes besides numbers ("center", "auto"). */
  keywords?: readonly string[];
  /** A pair ([inner, outer], [x, y]) or a list of up to four (padding) is also accepted, each item bounded alike. */
  list?: number;
}

const POSITION_WORDS = ["left", "center", "right", "top", "middle", "bottom", "auto"];
const POSITION: Bound = { px: [-10_000, 10_000], percent: [-100, 200], keywords: POSITION_WORDS };
const SIZE: Bound = { px: [0, 10_000], percent: [0, 200], keywords: ["auto"] };
const STROKE: Bound = { px: [0, 100] };
const SPACING: Bound = { px: [0, 1_000], list: 4 };
const OFFSET: Bound = { px: [-1_000, 1_000] };
const ANGLE: Bound = { px: [-720, 720] };

/** Bounds by key, wherever the key sits in the option (series, axes, labels, legends, titles). */
export const OPTION_BOUNDS: Readonly<Record<string, Bound>> = {
  fontSize: { px: [1, 200] },
  lineHeight: { px: [0, 400] },
  symbolSize: { px: [0, 500], list: 2 },
  symbolOffset: { px: [-1_000, 1_000], percent: [-200, 200], list: 2 },
  radius: { px: [0, 5_000], percent: [0, 200], list: 2 },
  center: { ...POSITION, list: 2 },
  offsetCenter: { ...POSITION, list: 2 },
  left: POSITION,
  right: POSITION,
  top: POSITION,
  bottom: POSITION,
  width: SIZE,
  height: SIZE,
  itemWidth: { px: [0, 1_000] },
  itemHeight: { px: [0, 1_000] },
  itemGap: { px: [0, 1_000] },
  barWidth: { px: [0, 10_000], percent: [0, 100], keywords: ["auto"] },
  barMaxWidth: { px: [0, 10_000], percent: [0, 100], keywords: ["auto"] },
  barMinWidth: { px: [0, 10_000], percent: [0, 100] },
  barMinHeight: { px: [0, 10_000] },
  barGap: { px: [-1_000, 1_000], percent: [-100, 100] },
  barCategoryGap: { px: [0, 1_000], percent: [0, 100] },
  borderWidth: STROKE,
  textBorderWidth: STROKE,
  borderRadius: { px: [0, 1_000], list: 4 },
  shadowBlur: { px: [0, 200] },
  textShadowBlur: { px: [0, 200] },
  shadowOffsetX: OFFSET,
  shadowOffsetY: OFFSET,
  textShadowOffsetX: OFFSET,
  textShadowOffsetY: OFFSET,
  padding: SPACING,
  margin: OFFSET,
  distance: OFFSET,
  length: { px: [0, 2_000], percent: [0, 200] },
  length2: { px: [0, 2_000] },
  splitNumber: { px: [0, 100] },
  rotate: ANGLE,
  startAngle: ANGLE,
  endAngle: ANGLE,
  minAngle: { px: [0, 360] },
  padAngle: { px: [0, 360] },
};

/** `width` inside a style object (lineStyle, axisLine.lineStyle, …) is a stroke, not a box. */
function boundOf(path: readonly (string | number)[]): Bound | undefined {
  const key = path[path.length - 1];
  if (typeof key !== "string" || !Object.hasOwn(OPTION_BOUNDS, key)) return undefined;
  const parent = path[path.length - 2];
  if (key === "width" && typeof parent === "string" && /Style$/.test(parent)) return STROKE;
  return OPTION_BOUNDS[key];
}

type Reading = { kind: "px" | "percent"; value: number } | { kind: "keyword" } | { kind: "unreadable" };

function read(value: unknown, bound: Bound): Reading {
  // null: ECharts' default, as if the key were absent.
  if (value === null) return { kind: "keyword" };
  if (typeof value === "number") return Number.isFinite(value) ? { kind: "px", value } : { kind: "unreadable" };
  if (typeof value !== "string") return { kind: "unreadable" };
  const text = value.trim();
  if (bound.keywords?.includes(text)) return { kind: "keyword" };
  const match = /^(-?\d+(?:\.\d+)?)(%|px)?$/.exec(text);
  if (!match) return { kind: "unreadable" };
  if (match[2] === "%") return bound.percent ? { kind: "percent", value: Number(match[1]) } : { kind: "unreadable" };
  return { kind: "px", value: Number(match[1]) };
}

function describe(bound: Bound): string {
  const parts = [`a number from ${bound.px[0].toLocaleString("en-US")} to ${bound.px[1].toLocaleString("en-US")}`];
  if (bound.percent) parts.push(`a percent from '${bound.percent[0]}%' to '${bound.percent[1]}%'`);
  if (bound.keywords) parts.push(bound.keywords.map((k) => `'${k}'`).join(", "));
  const one = parts.length > 1 ? `${parts.slice(0, -1).join(", ")} or ${parts[parts.length - 1]}` : parts[0];
  return bound.list ? `${one} (or a list of up to ${bound.list} such values)` : one;
}

/** The problem of one scalar under `bound`, or null. */
function scalarProblem(value: unknown, bound: Bound): string | null {
  const reading = read(value, bound);
  if (reading.kind === "keyword") return null;
  if (reading.kind === "unreadable") return `must be ${describe(bound)}`;
  const [low, high] = reading.kind === "px" ? bound.px : bound.percent!;
  return reading.value >= low && reading.value <= high ? null : `${JSON.stringify(value)} is out of range: must be ${describe(bound)}`;
}

/** Every out-of-range or unreadable length, angle or count of an option, each with its path. */
export function optionBoundProblems(option: Record<string, unknown>): OptionProblem[] {
  const problems: OptionProblem[] = [];
  visit(option, [], (value, path, bound) => {
    if (Array.isArray(value)) {
      if (!bound.list || value.length === 0 || value.length > bound.list) return problems.push({ path, message: `must be ${describe(bound)}` });
      value.forEach((item, i) => {
        const problem = scalarProblem(item, bound);
        if (problem) problems.push({ path: [...path, i], message: problem });
      });
      return;
    }
    const problem = scalarProblem(value, bound);
    if (problem) problems.push({ path, message: problem });
  });
  return problems;
}

function clampScalar(value: unknown, bound: Bound): unknown {
  const reading = read(value, bound);
  if (reading.kind === "keyword") return value;
  if (reading.kind === "unreadable") return undefined;
  const [low, high] = reading.kind === "px" ? bound.px : bound.percent!;
  const clamped = Math.min(high, Math.max(low, reading.value));
  return reading.kind === "percent" ? `${clamped}%` : typeof value === "number" ? clamped : `${clamped}`;
}

/**
 * A copy of the option with every bounded value brought into its range (an unreadable one
 * removed, so ECharts uses its default): what the report renderer draws for options stored
 * before the rule, and for sizes the option builder computed. Anything else is kept as it is,
 * functions the builder put in (formatters) included.
 */
export function withinBounds<T extends Record<string, unknown>>(option: T): T {
  return clampTree(option, []) as T;
}

function clampTree(value: unknown, path: (string | number)[]): unknown {
  if (Array.isArray(value)) return value.map((item, i) => clampTree(item, [...path, i]));
  if (value === null || typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    const at = [...path, key];
    const bound = boundOf(at);
    if (!bound || (child !== null && typeof child === "object" && !Array.isArray(child))) {
      out[key] = clampTree(child, at);
      continue;
    }
    const fixed = Array.isArray(child) ? (bound.list && child.length > 0 ? child.slice(0, bound.list).map((item) => clampScalar(item, bound) ?? 0) : undefined) : clampScalar(child, bound);
    if (fixed !== undefined) out[key] = fixed;
  }
  return out;
}

/** Calls `found` for each bounded key's value (not descending into it), with its path. */
function visit(value: unknown, path: (string | number)[], found: (value: unknown, path: (string | number)[], bound: Bound) => void): void {
  if (Array.isArray(value)) return value.forEach((item, i) => visit(item, [...path, i], found));
  if (value === null || typeof value !== "object") return;
  const record = value as Record<string, unknown>;
  for (const [key, child] of Object.entries(record)) {
    const at = [...path, key];
    const bound = boundOf(at);
    // Objects under a bounded key are not a length (`label.width` is a number, `visualMap.left` too; `title` is not bounded).
    if (bound && (child === null || typeof child !== "object" || Array.isArray(child))) found(child, at, bound);
    else visit(child, at, found);
  }
}
