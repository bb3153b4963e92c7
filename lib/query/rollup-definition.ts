import type { Dataset, Rollup } from "@/lib/manifest/schema";
import { WAREHOUSE_COLUMNS, WAREHOUSE_LOCATION_COLUMNS } from "@/lib/db/warehouse";

/**
 * Rollups (issue 31 §2, docs/rollups.md): a dataset's declared pre-aggregations, as the engine
 * stores and matches them. A definition names SQL expressions, not manifest ids, so the same
 * rollup declared by two dashboards (or two versions of one) is one materialisation per
 * organization, and a widget of any dataset over the same source can be answered by it when its
 * expressions are covered (the catalog KPIs read `orders` with the same column expressions).
 *
 * Framework-free and without hashing: the manifest validator (browser and server) uses it too.
 */

/** Aggregates whose partial results recombine exactly: a sum of sums, a sum of counts, a min of mins. */
export type AdditiveFunction = "sum" | "count" | "min" | "max";

export interface RollupMeasure {
  /** The metric's expression as written, e.g. `sum(orders.amount)`: what a selection's metric is matched on. */
  expression: string;
  fn: AdditiveFunction;
}

export interface RollupDefinition {
  /** The name in the manifest (a label; identity is the content). */
  name: string;
  /** The dataset's FROM clause. */
  source: string;
  /** The time dimension's expression and the grain its buckets have. */
  time: { column: string; grain: "day" | "month" };
  /** The column holding the location id (row-level security's location scope applies to it), or null when the source reads no location-scoped table. */
  location: string | null;
  /** Further grouping expressions, in a canonical order. */
  dimensions: string[];
  /** Measures, in a canonical order. */
  measures: RollupMeasure[];
}

/**
 * Tables whose rows carry a location under row-level security (the `location_scope` policies of migration 0001),
 * each with the column its policy tests. A source reading one needs a location dimension; the full rule (every
 * expression row-level, every location-scoped table joined on its location) is lib/query/rollup-scope.ts's, on
 * PostgreSQL's parser, on the server: the browser's editor checks these names only.
 */
export const LOCATION_COLUMNS: Readonly<Record<string, string>> = WAREHOUSE_LOCATION_COLUMNS;
const LOCATION_SCOPED = new RegExp(`\\b(${Object.keys(LOCATION_COLUMNS).join("|")})\\b`, "i");
const LOCATION_COLUMN = new RegExp(`^\\s*(${Object.entries(LOCATION_COLUMNS).map(([table, column]) => `${table}\\.${column}`).join("|")})\\s*$`, "i");

/** Expressions are compared as written, less surrounding and repeated white space. */
export const normalizeExpression = (text: string) => text.trim().replace(/\s+/g, " ");

/**
 * The additive aggregate a metric expression is, or null: one call of sum, count, min or max over
 * the whole expression, without DISTINCT, FILTER or ORDER BY. `sum(a) / sum(b)`, `avg(x)` and
 * `count(DISTINCT x)` are not: a ratio is recomposed by a formula metric over additive parts,
 * and the others fall through to the base tables.
 */
export function additiveAggregate(expression: string): AdditiveFunction | null {
  const match = /^\s*(sum|count|min|max)\s*\(([\s\S]*)\)\s*$/i.exec(expression);
  if (!match) return null;
  const inner = match[2];
  // The call's own parentheses must enclose everything: `sum(a) / sum(b)` matches the pattern too.
  let depth = 0;
  for (const char of inner) {
    if (char === "(") depth++;
    else if (char === ")" && --depth < 0) return null;
  }
  if (depth !== 0 || /^\s*distinct\b/i.test(inner) || /\border\s+by\b/i.test(inner) || inner.includes("'")) return null;
  return match[1].toLowerCase() as AdditiveFunction;
}

/** The part of a definition a problem is about: the source, the time or location column, a dimension or a measure (by expression). */
export type RollupPart = { kind: "source" } | { kind: "time" } | { kind: "location" } | { kind: "dimension"; expression: string } | { kind: "measure"; expression: string };

/**
 * The server's check that a definition cannot widen a location scope (lib/query/rollup-scope.ts, on PostgreSQL's
 * parser). The browser's editor has none, and the server's answer on save.
 */
export type RollupScopeCheck = (definition: RollupDefinition) => { part: RollupPart; message: string }[];

/**
 * Problems of one declared rollup against its dataset, each with the key it is about; with `scopeCheck` (the
 * server), also every way its expressions or source could answer a scoped caller with rows outside the scope.
 */
export function rollupProblems(dataset: Dataset, rollup: Rollup, scopeCheck?: RollupScopeCheck): { key: (string | number)[]; message: string }[] {
  const problems: { key: (string | number)[]; message: string }[] = [];
  if (dataset.from === undefined) {
    problems.push({ key: [], message: "rollups need a dataset with a `from` source (query and kpi datasets are answered from their own SQL)" });
    return problems;
  }
  const dimensions = new Map(dataset.dimensions.map((d) => [d.id, d]));
  const metrics = new Map(dataset.metrics.map((m) => [m.id, m]));
  const seen = new Set<string>();
  const dimension = (id: string, key: (string | number)[]) => {
    if (seen.has(id)) problems.push({ key, message: `'${id}' is named twice in this rollup` });
    seen.add(id);
    if (!dimensions.has(id)) problems.push({ key, message: `unknown dimension '${id}'${metrics.has(id) ? " (a metric; list it under measures)" : ""}` });
  };
  dimension(rollup.time_dimension, ["time_dimension"]);
  if (rollup.location_dimension !== undefined) {
    dimension(rollup.location_dimension, ["location_dimension"]);
    const column = dimensions.get(rollup.location_dimension)?.column;
    // A column of a table the browser does not know (an organization's own) is left to the server's scope check.
    const table = column === undefined ? undefined : /^\s*(\w+)\./.exec(column)?.[1];
    if (column !== undefined && (table === undefined || Object.hasOwn(WAREHOUSE_COLUMNS, table.toLowerCase())) && !LOCATION_COLUMN.test(column)) {
      problems.push({ key: ["location_dimension"], message: "the location dimension must be orders.location_id, sales_targets.location_id or locations.id (or the location column of a table of the organization's own), the column location scopes test" });
    }
  } else if (LOCATION_SCOPED.test(dataset.from)) {
    problems.push({ key: [], message: "this source reads location-scoped rows: name the dimension holding the location id in location_dimension, so a location scope applies to the rollup as it does to the tables" });
  }
  rollup.dimensions.forEach((id, i) => dimension(id, ["dimensions", i]));
  rollup.measures.forEach((id, i) => {
    const metric = metrics.get(id);
    if (!metric) return void problems.push({ key: ["measures", i], message: `unknown measure '${id}'${dimensions.has(id) ? " (a dimension; list it under dimensions)" : ""}` });
    if (metric.type === "formula") {
      return void problems.push({ key: ["measures", i], message: `'${id}' is a formula: it is computed after the query from its parts, so list the sql metrics it reads instead` });
    }
    if (!additiveAggregate(metric.expression)) {
      problems.push({
        key: ["measures", i],
        message: `'${id}' (${metric.expression}) is not additive: a rollup holds sum, count, min or max of a whole expression (no DISTINCT); a ratio is a formula over additive metrics, and other aggregates are answered from the tables`,
      });
    }
  });
  if (problems.length > 0 || !scopeCheck) return problems;
  const column = (id: string) => normalizeExpression(dimensions.get(id)!.column);
  const keyOf = (part: RollupPart): (string | number)[] => {
    if (part.kind === "time") return ["time_dimension"];
    if (part.kind === "location") return ["location_dimension"];
    if (part.kind === "dimension") return ["dimensions", Math.max(0, rollup.dimensions.findIndex((id) => column(id) === part.expression))];
    if (part.kind === "measure") return ["measures", Math.max(0, rollup.measures.findIndex((id) => normalizeExpression(metrics.get(id)!.expression) === part.expression))];
    return [];
  };
  return scopeCheck(rollupDefinition(dataset, rollup)).map((problem) => ({ key: keyOf(problem.part), message: problem.message }));
}

/** The definition of a rollup that passed rollupProblems. */
function rollupDefinition(dataset: Dataset, rollup: Rollup): RollupDefinition {
  const column = (id: string) => normalizeExpression(dataset.dimensions.find((d) => d.id === id)!.column);
  const measures = rollup.measures.map((id) => {
    const expression = normalizeExpression(dataset.metrics.find((m) => m.id === id)!.expression);
    return { expression, fn: additiveAggregate(expression)! };
  });
  return {
    name: rollup.name,
    source: normalizeExpression(dataset.from!),
    time: { column: column(rollup.time_dimension), grain: rollup.granularity },
    location: rollup.location_dimension !== undefined ? column(rollup.location_dimension) : null,
    dimensions: [...new Set(rollup.dimensions.map(column))].sort(),
    measures: [...new Map(measures.map((m) => [m.expression, m])).values()].sort((a, b) => a.expression.localeCompare(b.expression)),
  };
}

/** Every valid rollup declared by the datasets of a dashboard. */
export function dashboardRollups(datasets: Iterable<Dataset>): RollupDefinition[] {
  const out: RollupDefinition[] = [];
  for (const dataset of datasets) {
    for (const rollup of dataset.rollups ?? []) if (rollupProblems(dataset, rollup).length === 0) out.push(rollupDefinition(dataset, rollup));
  }
  return out;
}

/** What identifies a materialisation: everything but the name, canonically ordered. */
export function rollupContent(definition: RollupDefinition): string {
  const { source, time, location, dimensions, measures } = definition;
  return JSON.stringify({ source, time, location, dimensions, measures });
}
