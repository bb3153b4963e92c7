import type { FilterOperator, WidgetManifest } from "@/lib/manifest/schema";
import { type DateContext, DateExpressionError, cellInstant, dayStartingAt, resolveDateExpression } from "./dates";

/**
 * Filter wiring (SPEC §2.5). A widget is narrowed by (a) the bindings of filter widgets
 * that target it or `*`, and (b) its own `filters` entries. One condition per filter
 * widget, field and operator; the same conditions are applied either in SQL (pushed into
 * WHERE/HAVING with bind parameters) or in memory (static, demo and sql-widget rows), with
 * the same meaning.
 */
export interface FilterCondition {
  /** The filter widget whose value this is. */
  source: string;
  field: string;
  operator: FilterOperator;
  value: unknown;
  /**
   * A `filters` entry or a binding naming this widget: when the widget's data lacks the
   * field, the widget becomes empty (SPEC §2.5 rule 4). A `target: "*"` binding applies only
   * to widgets that have the field, so one date filter can drive a page of unrelated widgets.
   */
  required: boolean;
}

type Scalar = string | number | boolean;

export type Predicate =
  | { kind: "compare"; op: "=" | ">" | "<" | ">=" | "<="; value: Scalar }
  | { kind: "in"; values: Scalar[] }
  | { kind: "contains"; text: string }
  /**
   * Dates: half-open [from, to), each bound a local midnight, with `days` the calendar days
   * those midnights start (in the organization's zone). Scalars (between): closed [from, to].
   */
  | { kind: "range"; from?: Scalar | Date; to?: Scalar | Date; toInclusive: boolean; days?: { from?: string; to?: string } };

export class FilterValueError extends Error {
  /**
   * @param source the filter widget whose value it is (the message names it)
   * @param reason what is wrong with the value, without the filter's name (a manifest error at the filter's default names it by its place)
   */
  constructor(source: string, readonly reason: string) {
    super(`filter '${source}': ${reason}`);
    this.name = "FilterValueError";
  }
}

const MAX_IN_VALUES = 1_000;

/** Empty selections mean "no filter", not "match nothing". */
function isUnset(value: unknown): boolean {
  return value === undefined || value === null || value === "" || (Array.isArray(value) && value.length === 0);
}

function pick(value: unknown, param: string | undefined): unknown {
  if (param === undefined || value === null || typeof value !== "object" || Array.isArray(value)) return value;
  return Object.hasOwn(value, param) ? (value as Record<string, unknown>)[param] : undefined;
}

/** One way a filter widget's value reaches a widget: a binding that targets it (or `*`), or one of its own `filters` entries. */
export interface FilterUse {
  source: string;
  field: string;
  operator: FilterOperator;
  param?: string;
  required: boolean;
}

/**
 * Which filters drive `widget`, and how: the one rule, read by the engine (conditions, cache key)
 * and by the viewer (what to fetch again when a filter changes). Only filter widgets bind (the
 * manifest validator refuses bindings elsewhere); a filter never drives itself.
 */
export function filterUses(widgets: Iterable<WidgetManifest>, widget: WidgetManifest): FilterUse[] {
  const uses: FilterUse[] = [];
  for (const filter of widgets) {
    if (filter.spec.component !== "filter" || filter.metadata.id === widget.metadata.id) continue;
    for (const binding of filter.spec.bindings) {
      if (binding.target !== "*" && binding.target !== widget.metadata.id) continue;
      uses.push({ source: filter.metadata.id, field: binding.field, operator: binding.operator, param: binding.param, required: binding.target !== "*" });
    }
  }
  for (const use of widget.spec.filters) uses.push({ source: use.filter_id, field: use.field, operator: use.operator, param: use.param, required: true });
  return uses;
}

/**
 * The conditions that apply to `widget` given the current value of every filter widget (absent: the filter's default).
 * `columns`, when the widget's columns are known before it runs (lib/query/sql-columns.ts), leaves out the `*`
 * bindings on fields it does not have: they could never apply to it.
 */
export function widgetConditions(widgets: Iterable<WidgetManifest>, widget: WidgetManifest, filterValues: Readonly<Record<string, unknown>>, columns: ReadonlySet<string> | null = null): FilterCondition[] {
  const byId = new Map<string, WidgetManifest>();
  for (const w of widgets) byId.set(w.metadata.id, w);
  const valueOf = (filterId: string) => {
    const filter = byId.get(filterId);
    return Object.hasOwn(filterValues, filterId) ? filterValues[filterId] : filter?.spec.display.filter?.default;
  };
  const conditions = new Map<string, FilterCondition>();
  for (const use of filterUses(byId.values(), widget)) {
    if (columns && !use.required && !columns.has(use.field)) continue;
    const condition: FilterCondition = { source: use.source, field: use.field, operator: use.operator, value: pick(valueOf(use.source), use.param), required: use.required };
    if (isUnset(condition.value)) continue;
    const key = JSON.stringify([condition.source, condition.field, condition.operator]);
    const existing = conditions.get(key);
    if (!existing || (!existing.required && condition.required)) conditions.set(key, condition);
  }
  return [...conditions.values()];
}

function scalar(value: unknown, condition: FilterCondition): Scalar {
  if (typeof value === "string" || typeof value === "boolean" || (typeof value === "number" && Number.isFinite(value))) return value;
  throw new FilterValueError(condition.source, `${condition.operator} needs a single text, number or boolean value for '${condition.field}'`);
}

function dateRange(value: unknown, condition: FilterCondition, context: DateContext): Predicate {
  const text = Array.isArray(value) && value.length === 2 ? `${String(value[0])} to ${String(value[1])}` : value;
  if (typeof text !== "string") throw new FilterValueError(condition.source, 'a date filter value is a date expression such as "last month"');
  try {
    const { from, to } = resolveDateExpression(text, context);
    const days = { from: from && dayStartingAt(from, context.timeZone), to: to && dayStartingAt(to, context.timeZone) };
    return { kind: "range", from, to, toInclusive: false, days };
  } catch (error) {
    if (error instanceof DateExpressionError) throw new FilterValueError(condition.source, error.message);
    throw error;
  }
}

/** What a condition's value means, independent of where it is applied. Throws FilterValueError for unusable values. */
export function toPredicate(condition: FilterCondition, context: DateContext): Predicate {
  const { value } = condition;
  switch (condition.operator) {
    case "eq":
      if (Array.isArray(value)) return toPredicate({ ...condition, operator: "in" }, context);
      return { kind: "compare", op: "=", value: scalar(value, condition) };
    case "in": {
      const values = (Array.isArray(value) ? value : [value]).map((v) => scalar(v, condition));
      if (values.length > MAX_IN_VALUES) throw new FilterValueError(condition.source, `at most ${MAX_IN_VALUES} values`);
      return { kind: "in", values };
    }
    case "gt":
    case "lt":
    case "gte":
    case "lte":
      return { kind: "compare", op: ({ gt: ">", lt: "<", gte: ">=", lte: "<=" } as const)[condition.operator], value: scalar(value, condition) };
    case "contains":
      return { kind: "contains", text: String(scalar(value, condition)) };
    case "date":
      return dateRange(value, condition, context);
    case "between": {
      if (Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === "number")) {
        return { kind: "range", from: value[0] as number, to: value[1] as number, toInclusive: true };
      }
      if (value !== null && typeof value === "object" && !Array.isArray(value) && ("from" in value || "to" in value)) {
        const { from, to } = value as { from?: unknown; to?: unknown };
        if (typeof from === "number" || typeof to === "number") {
          return { kind: "range", from: isUnset(from) ? undefined : scalar(from, condition), to: isUnset(to) ? undefined : scalar(to, condition), toInclusive: true };
        }
        return dateRange(`${String(from ?? "")} to ${String(to ?? "")}`, condition, context);
      }
      return dateRange(value, condition, context);
    }
  }
}

// ---------------------------------------------------------------- SQL

/** Collects bind parameters and hands out their placeholders; values never enter the SQL text. */
export class SqlParams {
  readonly values: unknown[] = [];
  add(value: unknown, cast?: string): string {
    this.values.push(value);
    return `$${this.values.length}${cast ? `::${cast}` : ""}`;
  }
}

/**
 * A predicate as SQL over an expression. A date bound that starts a calendar day is bound as
 * that day, `YYYY-MM-DD`, with no type: PostgreSQL reads it in the expression's own type, so a
 * `date` column compares date to date, a timestamptz one to the day's local midnight (the
 * executor sets the transaction's TimeZone to the organization's) and a text one of ISO dates
 * as text. Same-type comparisons are leakproof, which lets the planner use them in an index
 * scan under row-level security; `order_date >= $1::timestamptz` (date against timestamptz)
 * is not, so it was a filter over every row of the tenant. Other date bounds compare as
 * timestamptz.
 */
export function predicateSql(expression: string, predicate: Predicate, params: SqlParams): string {
  const e = `(${expression})`;
  switch (predicate.kind) {
    case "compare":
      return `${e} ${predicate.op} ${params.add(predicate.value)}`;
    case "in":
      return `${e} IN (${predicate.values.map((v) => params.add(v)).join(", ")})`;
    case "contains":
      return `${e}::text ILIKE ${params.add(`%${predicate.text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`, "text")} ESCAPE '\\'`;
    case "range": {
      const bound = (v: Scalar | Date, day: string | undefined) =>
        v instanceof Date ? (day !== undefined ? params.add(day) : params.add(v.toISOString(), "timestamptz")) : params.add(v);
      const parts: string[] = [];
      if (predicate.from !== undefined) parts.push(`${e} >= ${bound(predicate.from, predicate.days?.from)}`);
      if (predicate.to !== undefined) parts.push(`${e} ${predicate.toInclusive ? "<=" : "<"} ${bound(predicate.to, predicate.days?.to)}`);
      return parts.length > 0 ? parts.join(" AND ") : "TRUE";
    }
  }
}

// ---------------------------------------------------------------- in memory

function compareCells(cell: unknown, value: Scalar): number | null {
  if (typeof value === "number") {
    const n = typeof cell === "number" ? cell : typeof cell === "string" && cell.trim() !== "" ? Number(cell) : Number.NaN;
    return Number.isNaN(n) ? null : n - value;
  }
  if (typeof value === "boolean") return typeof cell === "boolean" ? Number(cell) - Number(value) : null;
  if (typeof cell === "string") return cell < value ? -1 : cell > value ? 1 : 0;
  if (typeof cell === "number") return compareCells(String(cell), value);
  return null;
}

/** The in-memory twin of predicateSql: a cell that is missing or null never matches, as NULL never does in SQL. */
export function predicateMatcher(predicate: Predicate, timeZone: string): (cell: unknown) => boolean {
  switch (predicate.kind) {
    case "compare": {
      const { op, value } = predicate;
      return (cell) => {
        const c = compareCells(cell, value);
        if (c === null) return false;
        return op === "=" ? c === 0 : op === ">" ? c > 0 : op === "<" ? c < 0 : op === ">=" ? c >= 0 : c <= 0;
      };
    }
    case "in":
      return (cell) => predicate.values.some((v) => compareCells(cell, v) === 0);
    case "contains": {
      const needle = predicate.text.toLowerCase();
      return (cell) => cell !== null && cell !== undefined && String(cell).toLowerCase().includes(needle);
    }
    case "range": {
      const { from, to, toInclusive } = predicate;
      if (from instanceof Date || to instanceof Date) {
        const low = from instanceof Date ? from.getTime() : -Infinity;
        const high = to instanceof Date ? to.getTime() : Infinity;
        const instants = new Map<unknown, number | null>();
        return (cell) => {
          let t = instants.get(cell);
          if (t === undefined) instants.set(cell, (t = cellInstant(cell, timeZone)));
          return t !== null && t >= low && t < high;
        };
      }
      return (cell) => {
        if (from !== undefined) {
          const c = compareCells(cell, from);
          if (c === null || c < 0) return false;
        }
        if (to !== undefined) {
          const c = compareCells(cell, to);
          if (c === null || (toInclusive ? c > 0 : c >= 0)) return false;
        }
        return cell !== null && cell !== undefined;
      };
    }
  }
}

/** Keeps the rows matching every (field, predicate); a field no row has makes the result empty. */
export function filterRows<T extends Record<string, unknown>>(rows: readonly T[], predicates: readonly { field: string; predicate: Predicate }[], timeZone: string): T[] {
  if (predicates.length === 0) return [...rows];
  const tests = predicates.map(({ field, predicate }) => ({ field, matches: predicateMatcher(predicate, timeZone) }));
  return rows.filter((row) => tests.every(({ field, matches }) => Object.hasOwn(row, field) && matches(row[field])));
}
