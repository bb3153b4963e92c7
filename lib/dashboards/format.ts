import type { Display } from "@/lib/manifest/schema";

/**
 * Number, label and KPI formatting for dashboard widgets. Locale is fixed to en-US so the
 * server-rendered HTML and the browser's hydration produce the same text (a user locale
 * would differ between the two and break hydration).
 */
export const LOCALE = "en-US";

type KpiDisplay = NonNullable<Display["kpi"]>;

/** A cell as a finite number, or null: numbers pass, numeric strings (numeric/bigint columns) are read, anything else is not a number. */
export function toNumber(value: unknown): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "string" && /^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(value)) return Number(value);
  return null;
}

/** Column ids as headings: `avg_order` → "Avg order". */
export function humanize(column: string): string {
  const words = column.replace(/[_-]+/g, " ").replace(/([a-z])([A-Z])/g, "$1 $2").trim();
  return words.length === 0 ? column : words.charAt(0).toUpperCase() + words.slice(1);
}

const numberFormats = new Map<string, Intl.NumberFormat>();
function numberFormat(options: Intl.NumberFormatOptions): Intl.NumberFormat {
  const key = JSON.stringify(options);
  let format = numberFormats.get(key);
  if (!format) numberFormats.set(key, (format = new Intl.NumberFormat(LOCALE, options)));
  return format;
}

/** A number as tables and tooltips show it: grouped, at most two decimals. */
export function formatNumber(value: number, maximumFractionDigits = 2): string {
  return numberFormat({ maximumFractionDigits }).format(value);
}

/**
 * Decimals to show for a numeric column: the most any of its values has, at most `cap`, so a
 * money column reads 20.40 beside 20.31 instead of 20.4.
 */
export function columnDecimals(values: Iterable<unknown>, cap = 2): number {
  let decimals = 0;
  for (const value of values) {
    const n = toNumber(value);
    if (n === null || Number.isInteger(n)) continue;
    const fraction = /\.(\d+)/.exec(String(n))?.[1] ?? "";
    decimals = Math.max(decimals, Math.min(cap, fraction.length));
    if (decimals === cap) break;
  }
  return decimals;
}

/** A number with exactly `decimals` fraction digits, grouped. */
export function formatFixed(value: number, decimals: number): string {
  return numberFormat({ minimumFractionDigits: decimals, maximumFractionDigits: decimals }).format(value);
}

/** Axis labels: short forms for large magnitudes (1.2M). */
export function formatCompact(value: number): string {
  return numberFormat({ notation: "compact", maximumFractionDigits: 1 }).format(value);
}

/** A table cell: numbers formatted, null empty, objects as JSON, everything else as text. */
export function formatCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") return Number.isFinite(value) ? formatNumber(value) : String(value);
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/**
 * The KPI figure. `percent` values are percentage points (35.2 → "35.2%"), as the KPI catalog
 * and formula metrics compute them. `currency` uses the ISO code when given; otherwise the
 * `prefix` (e.g. "$") stands for the symbol, and with neither the figure is shown in USD.
 */
export function formatKpiValue(value: number, display: KpiDisplay | undefined): string {
  const format = display?.format ?? "number";
  const decimals = display?.decimals;
  const digits = (fallbackMax: number): Intl.NumberFormatOptions =>
    decimals === undefined ? { maximumFractionDigits: fallbackMax } : { minimumFractionDigits: decimals, maximumFractionDigits: decimals };
  let text: string;
  if (format === "currency" && (display?.currency || !display?.prefix)) {
    text = numberFormat({ style: "currency", currency: display?.currency ?? "USD", ...digits(2) }).format(value);
  } else if (format === "currency") {
    text = numberFormat(decimals === undefined ? { minimumFractionDigits: 2, maximumFractionDigits: 2 } : digits(decimals)).format(value);
  } else if (format === "percent") {
    text = `${numberFormat(digits(1)).format(value)}%`;
  } else {
    text = numberFormat(digits(2)).format(value);
  }
  // A sign belongs before the prefix: -$1,200, not $-1,200.
  const prefix = display?.prefix ?? "";
  if (prefix && text.startsWith("-")) text = `-${prefix}${text.slice(1)}`;
  else text = `${prefix}${text}`;
  return `${text}${display?.suffix ?? ""}`;
}

export type Direction = "up" | "down" | "flat";

export interface KpiDelta {
  text: string;
  direction: Direction;
  /** good/bad per positive_is_good; flat is neutral. */
  tone: "good" | "bad" | "neutral";
  label?: string;
}

/** The KPI's change against its comparison column; null when either figure is missing or a percent change has no base. */
export function kpiDelta(value: number | null, comparison: number | null, display: KpiDisplay | undefined): KpiDelta | null {
  const delta = display?.delta;
  if (!delta || value === null || comparison === null) return null;
  let change: number;
  let text: string;
  if (delta.mode === "absolute") {
    change = value - comparison;
    text = formatKpiValue(Math.abs(change), display);
  } else {
    if (comparison === 0) return null;
    change = ((value - comparison) / Math.abs(comparison)) * 100;
    text = `${numberFormat({ maximumFractionDigits: 1 }).format(Math.abs(change))}%`;
  }
  // Rounded to what is shown, so "0%" is never painted red or green.
  const shown = Number(text.replace(/[^\d.]/g, ""));
  const direction: Direction = shown === 0 || change === 0 ? "flat" : change > 0 ? "up" : "down";
  const sign = direction === "up" ? "+" : direction === "down" ? "−" : "";
  const tone = direction === "flat" ? "neutral" : (direction === "up") === delta.positive_is_good ? "good" : "bad";
  return { text: `${sign}${text}`, direction, tone, label: delta.label };
}
