import type { Display, WidgetManifest } from "@/lib/manifest/schema";
import { DateExpressionError, resolveDateExpression } from "@/lib/query/dates";
import { LOCALE } from "./format";

/**
 * Framework-free helpers of the filter widget: its options, the shape of the value it sends
 * (what lib/query/filters.ts reads for the filter's operators) and the date range a typed
 * date expression stands for, resolved exactly as the server will resolve it.
 */
type FilterDisplay = NonNullable<Display["filter"]>;
export type Scalar = string | number | boolean | null;

export interface FilterOption {
  /** The value sent to the query endpoint (null: the option that clears the filter). */
  value: Scalar;
  label: string;
  /** Stable string form for <option value>, radio values and comparisons. */
  key: string;
}

/** String form of a scalar that keeps its type, so 1 and "1" are different options. */
export function optionKey(value: Scalar): string {
  return JSON.stringify(value);
}

/**
 * Options: the static `display.filter.options`, else the widget's rows: the `value` mapping
 * (else the first column) and the `label` mapping (else the second column, else the value).
 * Duplicates are dropped, first one wins.
 */
export function filterOptions(display: FilterDisplay | undefined, mappings: Record<string, string | string[]> | undefined, columns: string[], rows: Record<string, unknown>[]): FilterOption[] {
  const options: FilterOption[] = [];
  const seen = new Set<string>();
  const add = (value: Scalar, label: string) => {
    const key = optionKey(value);
    if (seen.has(key)) return;
    seen.add(key);
    options.push({ value, label, key });
  };
  if (display?.options) {
    for (const option of display.options) {
      if (option !== null && typeof option === "object") add(option.value, option.label);
      else add(option, option === null ? "(none)" : String(option));
    }
    return options;
  }
  const one = (name: string) => {
    const mapped = mappings?.[name];
    return Array.isArray(mapped) ? mapped[0] : mapped;
  };
  const valueColumn = one("value") ?? columns[0] ?? Object.keys(rows[0] ?? {})[0];
  const labelColumn = one("label") ?? (one("value") === undefined ? columns[1] : undefined);
  if (!valueColumn) return options;
  for (const row of rows) {
    const raw = row[valueColumn];
    const value: Scalar = raw === undefined ? null : typeof raw === "object" && raw !== null ? JSON.stringify(raw) : (raw as Scalar);
    const label = labelColumn !== undefined && row[labelColumn] !== null && row[labelColumn] !== undefined ? String(row[labelColumn]) : value === null ? "(none)" : String(value);
    add(value, label);
  }
  return options;
}

/** A filter widget as the embed and schedule dialogs offer it: its choices by label, where it has any. */
export interface FilterSummary {
  id: string;
  name: string;
  control: string;
  multiple: boolean;
  /** The options the viewer shows (a location by its name), from the manifest or the filter's own first query; none for dates. */
  options: FilterOption[];
}

/** The filter widgets of a page with their options, read from the page's first results the way the viewer reads them. */
export function filterSummaries(widgets: readonly WidgetManifest[], results: Readonly<Record<string, { columns: string[]; rows: Record<string, unknown>[] } | undefined>>): FilterSummary[] {
  return widgets.flatMap((w) => {
    if (w.spec.component !== "filter") return [];
    const display = w.spec.display.filter;
    const control = display?.control ?? "select";
    const result = results[w.metadata.id];
    const options = DATE_CONTROLS.has(control) ? [] : filterOptions(display, w.spec.data?.mappings, result?.columns ?? [], result?.rows ?? []);
    return [{ id: w.metadata.id, name: w.metadata.name, control, multiple: display?.multiple ?? false, options }];
  });
}

const DATE_CONTROLS = new Set(["date", "date_range", "calendar"]);

/** The value as the list of selected scalars (a multiple select's value is an array; a single one a scalar). */
export function selectedValues(value: unknown): Scalar[] {
  if (value === undefined || value === null || value === "") return [];
  const list = Array.isArray(value) ? value : [value];
  return list.filter((v): v is Scalar => v === null || ["string", "number", "boolean"].includes(typeof v));
}

/** The value a filter shows: the URL's value when present, else the manifest default (the engine applies the same default). */
export function effectiveValue(filterValue: unknown, display: FilterDisplay | undefined): unknown {
  return filterValue === undefined ? display?.default : filterValue;
}

export type ResolvedDate = { ok: true; text: string } | { ok: false; error: string };

const dayFormats = new Map<string, Intl.DateTimeFormat>();
function dayFormat(timeZone: string): Intl.DateTimeFormat {
  let format = dayFormats.get(timeZone);
  if (!format) dayFormats.set(timeZone, (format = new Intl.DateTimeFormat(LOCALE, { timeZone, weekday: "short", day: "numeric", month: "short", year: "numeric" })));
  return format;
}

/**
 * What a date expression covers, in words, in the organization's zone: "Sun, 1 Nov 2026 – Mon,
 * 30 Nov 2026", "until Sat, 28 Feb 2026", "from …", or the parser's own error message.
 * Ranges are half-open, so the last day shown is the one before `to`.
 */
export function describeDateExpression(expression: string, timeZone: string, now: Date = new Date()): ResolvedDate {
  try {
    const { from, to } = resolveDateExpression(expression, { now, timeZone });
    const format = dayFormat(timeZone);
    const first = from ? format.format(from) : undefined;
    // The last included day is the one containing the instant just before `to`.
    const last = to ? format.format(new Date(to.getTime() - 1)) : undefined;
    if (first && last) return { ok: true, text: first === last ? first : `${first} – ${last}` };
    if (first) return { ok: true, text: `from ${first}` };
    if (last) return { ok: true, text: `until ${last}` };
    return { ok: true, text: "all dates" };
  } catch (error) {
    if (error instanceof DateExpressionError) return { ok: false, error: error.message };
    throw error;
  }
}

/**
 * The date filter value the figures use, in words: "all dates" when unset (cleared, or no
 * default), else the expression and its days, "last month (Thu, 1 Oct 2026 – Sat, 31 Oct 2026)".
 */
export function describeAppliedDate(value: unknown, timeZone: string, now: Date = new Date()): string {
  if (value === undefined || value === null || value === "" || (Array.isArray(value) && value.length === 0)) return "all dates";
  const text = Array.isArray(value) && value.length === 2 ? `${String(value[0])} to ${String(value[1])}` : String(value);
  const resolved = describeDateExpression(text, timeZone, now);
  return resolved.ok && resolved.text !== text ? `${text} (${resolved.text})` : text;
}

/**
 * Where the text of a date box stands against the value the figures use (`applied`, "" when
 * unset): `applied` when it is that value; `editing` while the box has focus (what it would
 * apply shows beside the label as you type); `unapplied` when the box was left holding text
 * that cannot be read. Readable text is applied when the box is left, so it never stays
 * unapplied; unreadable text is neither applied nor silently swapped for the applied value: the
 * box keeps it, says it is not applied, and the widgets say which value they still show.
 */
export function typedDateState(text: string, applied: string, focused: boolean, timeZone: string, now: Date = new Date()): "applied" | "editing" | "unapplied" {
  const typed = text.trim();
  if (typed === applied.trim()) return "applied";
  if (focused) return "editing";
  return typed !== "" && !describeDateExpression(typed, timeZone, now).ok ? "unapplied" : "applied";
}

/**
 * The from/to days (YYYY-MM-DD, both included) that an expression written by the date pickers
 * spells out literally ("A to B", "since A", "before B+1", "A"), so the pickers can show them;
 * other expressions leave the pickers empty.
 */
export function splitDateRange(expression: string): { from: string; to: string } {
  const text = expression.trim().toLowerCase();
  const day = "(\\d{4}-\\d{2}-\\d{2})";
  let m: RegExpExecArray | null;
  if ((m = new RegExp(`^${day} to ${day}$`).exec(text))) return { from: m[1], to: m[2] };
  if ((m = new RegExp(`^since ${day}$`).exec(text))) return { from: m[1], to: "" };
  if ((m = new RegExp(`^before ${day}$`).exec(text))) return { from: "", to: shiftDay(m[1], -1) };
  if ((m = new RegExp(`^${day}$`).exec(text))) return { from: m[1], to: m[1] };
  return { from: "", to: "" };
}

/** The expression for a from/to pair of days (both included; either may be empty). */
export function joinDateRange(from: string, to: string): string {
  if (from && to) return `${from} to ${to}`;
  if (from) return `since ${from}`;
  // "before D" excludes D, so an inclusive last day is "before the day after".
  if (to) return `before ${shiftDay(to, 1)}`;
  return "";
}

function shiftDay(day: string, days: number): string {
  const [y, m, d] = day.split("-").map(Number);
  const shifted = new Date(Date.UTC(2000, m - 1, d + days));
  shifted.setUTCFullYear(y, m - 1, d + days);
  return shifted.toISOString().slice(0, 10);
}

/**
 * The quick picks beside a date box. Each writes the same expression a user could type, so the
 * URL, the applied-value text and the server read a preset exactly as typed text.
 */
export const DATE_PRESETS: readonly { label: string; expression: string }[] = [
  { label: "Today", expression: "today" },
  { label: "Yesterday", expression: "yesterday" },
  { label: "Last 7 days", expression: "last 7 days" },
  { label: "Last 30 days", expression: "last 30 days" },
  { label: "This month", expression: "this month" },
  { label: "Last month", expression: "last month" },
  { label: "This year", expression: "this year" },
  { label: "Last year", expression: "last year" },
];

/** The preset whose expression the value is (case and spacing aside), or undefined. */
export function datePresetOf(value: string): (typeof DATE_PRESETS)[number] | undefined {
  const text = value.trim().toLowerCase().replace(/\s+/g, " ");
  return DATE_PRESETS.find((preset) => preset.expression === text);
}
