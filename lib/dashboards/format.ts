import cronstrue from "cronstrue";
import type { Display } from "@/lib/manifest/schema";
import { type ResolvedFormat, type ValueFormat, resolveFormat } from "@/lib/manifest/value-format";

/**
 * Number, label and KPI formatting for dashboard widgets. Locale is fixed to en-US so the
 * server-rendered HTML and the browser's hydration produce the same text (a user locale
 * would differ between the two and break hydration).
 */
export const LOCALE = "en-US";

type KpiDisplay = NonNullable<Display["kpi"]>;

/** The currency of a format that names none, for an organization without one (every organization has one since setup). */
export const DEFAULT_CURRENCY = "USD";

/**
 * How an organization's pages, reports and messages read: dates and times in its time zone, money without a declared
 * code in its currency (ISO 4217). Read once per request (lib/dashboards/query.ts grantedLocale).
 */
export interface OrgLocale {
  timeZone: string;
  currency: string;
}

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

/** Identifiers are numbers too, but "1,000,061,794" reads wrong for an order id: an `id` or `…_id` column is shown as stored. */
export function isIdColumn(column: string): boolean {
  return /(^|_)id$/i.test(column);
}

/**
 * How the cells of one column read, given the column's values: in its declared format; an
 * undeclared id column as stored; other numbers with as many decimals as the column's values need
 * (at most two); anything else as `formatCell`. The one rule of tables, grids and report tables.
 */
export function columnFormatter(column: string, values: readonly unknown[], declared: ValueFormat | undefined): (value: unknown) => string {
  const format = declared === undefined ? undefined : resolveFormat(declared);
  const asStored = format === undefined && isIdColumn(column);
  let decimals: number | undefined;
  return (value) => {
    const n = toNumber(value);
    if (n === null) return formatCell(value);
    if (format) return formatValue(n, format);
    if (asStored) return String(value);
    decimals ??= columnDecimals(values);
    return formatFixed(n, decimals);
  };
}

/**
 * A declared format as a spreadsheet number format (Excel's numFmt), so an exported workbook keeps the numbers as
 * numbers and shows them as the grid does: currency with its symbol, percent as percentage points. None for a
 * number without fixed decimals (Excel's General keeps its digits) and for undeclared columns (ids stay as stored).
 */
export function spreadsheetFormat(declared: ValueFormat | undefined): string | undefined {
  if (declared === undefined) return undefined;
  const { type, decimals, currency } = resolveFormat(declared);
  const fixed = (digits: number) => (digits > 0 ? `0.${"0".repeat(digits)}` : "0");
  if (type === "currency") {
    const symbol = numberFormat({ style: "currency", currency: currency ?? DEFAULT_CURRENCY }).formatToParts(0).find((part) => part.type === "currency")?.value ?? "";
    return `"${symbol.replace(/"/g, "")}"#,##${fixed(decimals ?? 2)};-"${symbol.replace(/"/g, "")}"#,##${fixed(decimals ?? 2)}`;
  }
  if (type === "percent") return decimals === undefined ? 'General"%"' : `${fixed(decimals)}"%"`;
  return decimals === undefined ? undefined : `#,##${fixed(decimals)}`;
}

/** A table cell: numbers formatted, null empty, objects as JSON, everything else as text. */
export function formatCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") return Number.isFinite(value) ? formatNumber(value) : String(value);
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/**
 * A number in its column's format (lib/manifest/value-format.ts): the one rule tiles, tables, grids
 * and tooltips share. `percent` values are percentage points (35.2 → "35.2%"), as the KPI catalog
 * and formula metrics compute them; `currency` is in the format's code, filled with the organization's
 * currency where the view is made (wiring.ts orgView), USD only where no organization is known. Without
 * `decimals`, currency shows 2, percent up to 1 and number up to 2.
 */
export function formatValue(value: number, format: ResolvedFormat): string {
  const { type, decimals } = format;
  const digits = (fallbackMax: number): Intl.NumberFormatOptions =>
    decimals === undefined ? { maximumFractionDigits: fallbackMax } : { minimumFractionDigits: decimals, maximumFractionDigits: decimals };
  if (type === "currency") return numberFormat({ style: "currency", currency: format.currency ?? DEFAULT_CURRENCY, ...(decimals === undefined ? { minimumFractionDigits: 2, maximumFractionDigits: 2 } : digits(decimals)) }).format(value);
  if (type === "percent") return `${numberFormat(digits(1)).format(value)}%`;
  return numberFormat(digits(2)).format(value);
}

/**
 * The format of a KPI tile's figure: the column's declared format when it has one (a metric's
 * format decides everywhere, so a tile never reads differently from a table of the same metric),
 * else the tile's own `display.kpi` format, currency and decimals.
 */
export function kpiValueFormat(display: KpiDisplay | undefined, declared: ValueFormat | undefined): ResolvedFormat {
  if (declared !== undefined) return resolveFormat(declared);
  return { type: display?.format ?? "number", currency: display?.currency, decimals: display?.decimals };
}

/**
 * The KPI figure in `kpiValueFormat`, with the tile's `prefix` and `suffix`. A currency figure with a prefix
 * (e.g. "$") takes the prefix as its symbol, whatever code the format or the organization names (never "$€12").
 */
export function formatKpiValue(value: number, display: KpiDisplay | undefined, declared?: ValueFormat): string {
  const format = kpiValueFormat(display, declared);
  const prefix = display?.prefix ?? "";
  let text = format.type === "currency" && prefix ? formatFixed(value, format.decimals ?? 2) : formatValue(value, format);
  // A sign belongs before the prefix: -$1,200, not $-1,200.
  if (prefix && text.startsWith("-")) text = `-${prefix}${text.slice(1)}`;
  else text = `${prefix}${text}`;
  return `${text}${display?.suffix ?? ""}`;
}

const instantFormats = new Map<string, Intl.DateTimeFormat>();

/**
 * A moment as every page, report and message prints it: date and time in `timeZone`, the zone
 * named ("Nov 26, 2026, 7:05 AM (Europe/Berlin)"), so no reader takes it for their own zone's.
 */
export function formatInstant(at: Date | string | null | undefined, timeZone: string): string {
  if (at === null || at === undefined) return "—";
  let format = instantFormats.get(timeZone);
  if (!format) instantFormats.set(timeZone, (format = new Intl.DateTimeFormat(LOCALE, { timeZone, dateStyle: "medium", timeStyle: "short" })));
  return `${format.format(typeof at === "string" ? new Date(at) : at)} (${timeZone})`;
}

/** The zone of whoever reads the page (the browser's), for times that belong to no schedule or organization. */
export function readerTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/**
 * A five-field cron expression in words, in the zone it runs in: "At 08:00 AM, Monday through
 * Friday (America/New_York)". An expression cronstrue cannot read is shown as written.
 */
export function cronInWords(cron: string, timeZone: string): string {
  let words: string;
  try {
    words = cronstrue.toString(cron, { locale: "en", use24HourTimeFormat: false, verbose: false });
  } catch {
    words = cron;
  }
  return `${words} (${timeZone})`;
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
export function kpiDelta(value: number | null, comparison: number | null, display: KpiDisplay | undefined, declared?: ValueFormat): KpiDelta | null {
  const delta = display?.delta;
  if (!delta || value === null || comparison === null) return null;
  let change: number;
  let text: string;
  if (delta.mode === "absolute") {
    change = value - comparison;
    text = formatKpiValue(Math.abs(change), display, declared);
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
