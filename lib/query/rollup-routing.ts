import type { DatasetSelection } from "./compile";
import type { Predicate } from "./filters";
import { type RollupDefinition, normalizeExpression } from "./rollup-definition";

/**
 * Routing (issue 31 §2): a widget's selection is answered from the smallest built, fresh rollup that
 * gives exactly what the base tables give, else from the tables. Covered means: the same source;
 * every grouped dimension and every condition's field kept by the rollup (the time dimension only at
 * the rollup's own grain, or coarser whole days or months for date ranges); every `sql` metric one of
 * its additive measures (formula metrics are recomputed from those after the query, as always). The
 * rewritten selection reads `rollup_rows` under the same row-level security and is compiled, shared
 * and limited like any other, so the rows come back in the same order under the same ids.
 *
 * Routing is query planning, so it lives here with the definitions it matches (rollup-definition.ts);
 * lib/rollups, above lib/query, builds, refreshes and registers the rollups it reads.
 */

/** A rollup as the registry holds it once built (lib/rollups/registry.ts). */
export interface BuiltRollup {
  id: string;
  name: string;
  definition: RollupDefinition;
  /** SQL types (casts) of the source's values: each dimension and measure by expression, and the time column. */
  types: RollupTypes;
  rowCount: number;
}

export interface RollupTypes {
  time: string;
  dimensions: Record<string, string>;
  measures: Record<string, string>;
}

const ALIAS = "_r";
export const ROLLUP_SOURCE = `rollup_rows AS ${ALIAS}`;

/** Where dimension i and measure j sit in a rollup row (rollup_rows.key, rollup_rows.measures). */
export const dimensionKey = (i: number) => `d${i}`;
export const measureKey = (j: number) => `m${j}`;

/**
 * The source's types a rollup may hold and how each is read back (a cast the allow-list accepts).
 * Text-like values compare as text; anything else (floating point: sums that depend on the order of
 * addition; bpchar with its padding rules) is refused at build time, and the tables answer.
 */
export const READ_BACK: Readonly<Record<string, string>> = {
  text: "text",
  "character varying": "text",
  date: "date",
  "timestamp with time zone": "timestamptz",
  "timestamp without time zone": "timestamp",
  smallint: "int2",
  integer: "int4",
  bigint: "int8",
  numeric: "numeric",
  boolean: "bool",
};

/** The routed selection and the rollup answering it, or null when only the tables can answer exactly. */
export function routeSelection(selection: DatasetSelection, rollups: readonly BuiltRollup[]): { selection: DatasetSelection; rollup: BuiltRollup } | null {
  if (selection.metrics.length === 0) return null;
  const ordered = [...rollups].sort((a, b) => a.rowCount - b.rowCount || a.id.localeCompare(b.id));
  for (const rollup of ordered) {
    const routed = rewrite(selection, rollup);
    if (routed) return { selection: routed, rollup };
  }
  return null;
}

function rewrite(selection: DatasetSelection, rollup: BuiltRollup): DatasetSelection | null {
  const { definition, types } = rollup;
  if (normalizeExpression(selection.source) !== definition.source) return null;
  const dimensionIndex = new Map(definition.dimensions.map((column, i) => [column, i]));
  const measureIndex = new Map(definition.measures.map((m, j) => [m.expression, j]));
  const timeIsDay = definition.time.grain === "day" && types.time === "date";

  /** A dimension's expression over rollup rows, typed as on the tables; null when the rollup lacks it. */
  const dimension = (expression: string): string | null => {
    const column = normalizeExpression(expression);
    if (definition.location !== null && column === definition.location) return `${ALIAS}.location_id`;
    const i = dimensionIndex.get(column);
    if (i !== undefined) return `((${ALIAS}.key->>'${dimensionKey(i)}')::${types.dimensions[column]})`;
    // The bucket is the value itself only for a date column at day grain.
    if (column === definition.time.column && timeIsDay) return `${ALIAS}.bucket`;
    return null;
  };
  const metric = (expression: string): string | null => {
    const j = measureIndex.get(normalizeExpression(expression));
    if (j === undefined) return null;
    const { fn } = definition.measures[j];
    const type = types.measures[definition.measures[j].expression];
    const partial = `(${ALIAS}.measures->>'${measureKey(j)}')::${type}`;
    // A count over no rows is 0, not the NULL a sum of no partials is.
    if (fn === "count") return `coalesce(sum(${partial}), 0)::${type}`;
    return `${fn}(${partial})::${type}`;
  };

  const dimensions: DatasetSelection["dimensions"] = [];
  for (const d of selection.dimensions) {
    const column = dimension(d.column);
    if (column === null) return null;
    dimensions.push({ id: d.id, column });
  }
  const metrics: DatasetSelection["metrics"] = [];
  for (const m of selection.metrics) {
    const expression = metric(m.expression);
    if (expression === null) return null;
    metrics.push({ id: m.id, expression });
  }
  const where: DatasetSelection["where"] = [{ expression: `${ALIAS}.rollup_id`, predicate: { kind: "compare", op: "=", value: rollup.id } }];
  for (const w of selection.where) {
    const column = dimension(w.expression);
    if (column !== null) {
      where.push({ expression: column, predicate: w.predicate });
      continue;
    }
    const bucketed = normalizeExpression(w.expression) === definition.time.column ? bucketRange(w.predicate, definition.time.grain) : null;
    if (bucketed === null) return null;
    where.push({ expression: `${ALIAS}.bucket`, predicate: bucketed });
  }
  const having: DatasetSelection["having"] = [];
  for (const h of selection.having) {
    const expression = metric(h.expression);
    if (expression === null) return null;
    having.push({ expression, predicate: h.predicate });
  }
  const order: DatasetSelection["order"] = [];
  for (const o of selection.order) {
    const expression = dimension(o.expression) ?? metric(o.expression);
    if (expression === null) return null;
    order.push({ ...o, expression });
  }
  return { ...selection, source: ROLLUP_SOURCE, dimensions, metrics, where, having, order };
}

/**
 * A date filter's range on the time column as a range of buckets, when it cuts whole buckets: its
 * bounds are local midnights (the `days` a date filter resolves to, in the zone the rollup's days
 * were cut in) and, at month grain, first days of months. Anything finer falls through.
 */
function bucketRange(predicate: Predicate, grain: "day" | "month"): Predicate | null {
  if (predicate.kind !== "range") return null;
  const bound = (value: unknown, day: string | undefined): string | null | undefined => {
    if (value === undefined) return undefined;
    if (!(value instanceof Date) || day === undefined) return null;
    return grain === "day" || day.endsWith("-01") ? day : null;
  };
  const from = bound(predicate.from, predicate.days?.from);
  const to = bound(predicate.to, predicate.days?.to);
  if (from === null || to === null || predicate.toInclusive) return null;
  return { kind: "range", from, to, toInclusive: false };
}
