import type { Dataset } from "@/lib/manifest/schema";
import { type Predicate, SqlParams, predicateSql } from "./filters";
import { formulaFields, parseFormula } from "./formula/parse";
import { type FormulaStep, planFormulaMetrics } from "./formula/plan";
import { QueryError } from "./errors";
import { checkSqlQuery } from "./sql-text";

export interface FieldPredicate {
  field: string;
  predicate: Predicate;
}

export interface CompileOptions {
  /** Dimension and metric ids wanted; all of the dataset's when omitted. */
  columns?: readonly string[];
  /** Conditions on the dataset's own fields (run.ts decides what to do with unknown fields). */
  filters?: readonly FieldPredicate[];
  /** Row cap; LIMIT is bound as a parameter. */
  limit: number;
}

export interface CompiledDataset {
  /** One parameterized statement; each row comes back as one JSON object column `row`. */
  text: string;
  values: unknown[];
  /** Output columns, in order. */
  columns: string[];
  /** Formula metrics to evaluate after the query, in dependency order. */
  formulas: FormulaStep[];
  /** Conditions on formula metrics, applied in memory after evaluation. */
  postFilters: FieldPredicate[];
}

export const quote = (id: string) => `"${id}"`;

/**
 * What one widget asks of a SQL dataset (`from` or `query` source), before it becomes SQL: the
 * source, the dimensions and `sql` metrics it selects (formula metrics pull in what they read),
 * the conditions on dimensions (WHERE) and on `sql` metrics (HAVING), its order, its row limit,
 * and the formulas and conditions on formulas applied after the query. compileDataset writes it as
 * one statement; shared-scan.ts answers several of them from one.
 */
export interface DatasetSelection {
  /** The FROM clause: the table expression, or the dataset's query as an aliased subquery. */
  source: string;
  dimensions: { id: string; column: string }[];
  metrics: { id: string; expression: string }[];
  where: { expression: string; predicate: Predicate }[];
  having: { expression: string; predicate: Predicate }[];
  /**
   * The dataset's `order_by`, restricted to selected dimensions and `sql` metrics; when that leaves
   * nothing, the rows are ordered by the selected dimensions in the dataset's order.
   */
  order: { id: string; expression: string; dir: "asc" | "desc" }[];
  /** Row cap, or one row past the dataset's own limit (so a result that limit cut can say so), whichever is smaller. */
  limit: number;
  columns: string[];
  formulas: FormulaStep[];
  postFilters: FieldPredicate[];
}

/** A SQL dataset's FROM clause: its `from` as written, or its `query` as a subquery named after the dataset. */
export function datasetSourceSql(dataset: Pick<Dataset, "id" | "from" | "query">): string {
  return dataset.query !== undefined ? `(\n${dataset.query}\n) AS ${quote(dataset.id)}` : dataset.from!;
}

/** Decides what a widget selects from a SQL dataset (see DatasetSelection); throws QueryError for a manifest mistake. */
export function selectDataset(dataset: Dataset, options: CompileOptions): DatasetSelection {
  const dimensions = new Map(dataset.dimensions.map((d) => [d.id, d]));
  const sqlMetrics = new Map(dataset.metrics.filter((m) => m.type === "sql").map((m) => [m.id, m]));
  const formulaMetrics = dataset.metrics.filter((m) => m.type === "formula");
  const all = [...dataset.dimensions.map((d) => d.id), ...dataset.metrics.map((m) => m.id)];
  const wanted = options.columns && options.columns.length > 0 ? [...options.columns] : all;
  for (const column of wanted) if (!all.includes(column)) throw new QueryError("bad_manifest", `dataset '${dataset.id}' has no column '${column}'`);

  const { steps, errors } = planFormulaMetrics(formulaMetrics, new Set([...dimensions.keys(), ...sqlMetrics.keys()]));
  if (errors.length > 0) throw new QueryError("bad_manifest", `dataset '${dataset.id}': metric '${errors[0].metricId}': ${errors[0].message}`);

  // Formula metrics (wanted or filtered on) pull in the columns they read, transitively.
  const postFilters = (options.filters ?? []).filter((f) => formulaMetrics.some((m) => m.id === f.field));
  const needed = new Set(wanted);
  for (const f of postFilters) needed.add(f.field);
  const formulaById = new Map(formulaMetrics.map((m) => [m.id, m]));
  const stack = [...needed];
  while (stack.length > 0) {
    const id = stack.pop()!;
    const metric = formulaById.get(id);
    if (!metric) continue;
    for (const dep of formulaFields(parseFormula(metric.expression)).keys()) {
      if (!needed.has(dep)) {
        needed.add(dep);
        stack.push(dep);
      }
    }
  }
  const selectedDimensions = dataset.dimensions.filter((d) => needed.has(d.id));
  const selectedMetrics = dataset.metrics.filter((m) => m.type === "sql" && needed.has(m.id));

  const where: DatasetSelection["where"] = [];
  const having: DatasetSelection["having"] = [];
  for (const { field, predicate } of options.filters ?? []) {
    const dimension = dimensions.get(field);
    if (dimension) where.push({ expression: dimension.column, predicate });
    const metric = sqlMetrics.get(field);
    if (metric) having.push({ expression: metric.expression, predicate });
  }
  const expressionOf = (id: string) => dimensions.get(id)?.column ?? sqlMetrics.get(id)!.expression;
  return {
    source: datasetSourceSql({ ...dataset, query: dataset.query !== undefined ? checkUserSql(dataset.query) : undefined }),
    dimensions: selectedDimensions.map((d) => ({ id: d.id, column: d.column })),
    metrics: selectedMetrics.map((m) => ({ id: m.id, expression: m.expression })),
    where,
    having,
    order: (dataset.order_by ?? []).filter((o) => needed.has(o.column) && !formulaById.has(o.column)).map((o) => ({ id: o.column, expression: expressionOf(o.column), dir: o.dir })),
    limit: Math.min(options.limit, dataset.limit === undefined ? options.limit : dataset.limit + 1),
    columns: wanted,
    formulas: steps.filter((s) => needed.has(s.id)),
    postFilters,
  };
}

/**
 * Compiles a SQL dataset (`from` or `query` source) with the wanted columns and filter
 * conditions into one statement: dimensions as fully qualified expressions, `sql` metrics
 * injected as aggregates, WHERE for dimension conditions, HAVING for metric conditions,
 * GROUP BY the dimensions when there are aggregates, ORDER BY, LIMIT. Every value is a
 * bind parameter. The rows are wrapped with row_to_json so dates, numerics and bigints
 * arrive as JSON (strings and numbers), keeping column order (see `asJsonRows`).
 */
export function compileDataset(dataset: Dataset, options: CompileOptions): CompiledDataset {
  return compileSelection(selectDataset(dataset, options));
}

/** One widget's selection as its own statement. */
export function compileSelection(selection: DatasetSelection): CompiledDataset {
  const { dimensions, metrics } = selection;
  const params = new SqlParams();
  const where = selection.where.map(({ expression, predicate }) => predicateSql(expression, predicate, params));
  const having = selection.having.map(({ expression, predicate }) => predicateSql(expression, predicate, params));
  const select = [...dimensions.map((d) => `${d.column} AS ${quote(d.id)}`), ...metrics.map((m) => `${m.expression} AS ${quote(m.id)}`)];
  if (select.length === 0) select.push("count(*) AS \"count\"");
  const aggregated = metrics.length > 0;
  const groupBy = aggregated && dimensions.length > 0 ? `\nGROUP BY ${dimensions.map((_, i) => i + 1).join(", ")}` : "";
  const orderBy =
    selection.order.length > 0 ? `\nORDER BY ${selection.order.map((o) => `${quote(o.id)} ${o.dir.toUpperCase()}`).join(", ")}`
    : dimensions.length > 0 ? `\nORDER BY ${dimensions.map((_, i) => i + 1).join(", ")}`
    : "";
  const inner =
    `SELECT ${select.join(", ")}\nFROM ${selection.source}` +
    (where.length > 0 ? `\nWHERE ${where.join(" AND ")}` : "") +
    groupBy +
    (having.length > 0 ? `\nHAVING ${having.join(" AND ")}` : "") +
    orderBy +
    `\nLIMIT ${params.add(selection.limit, "int")}`;
  return {
    text: asJsonRows(inner),
    values: params.values,
    columns: selection.columns,
    formulas: selection.formulas,
    postFilters: selection.postFilters,
  };
}

/** The alias of the wrapped source in `compileUserQuery`; a missing filter column is reported under it. */
export const USER_SOURCE_ALIAS = "_quarry_source";

/**
 * Wraps a user query (`sql` widget) as a subquery, with the filter conditions on its output
 * columns pushed into WHERE (bind parameters, quoted column names) and the row cap as LIMIT,
 * so a filter finds matching rows wherever they are in the query's result. A condition on a
 * column the query lacks fails with `column _quarry_source.<field> does not exist` (run.ts
 * decides what that means).
 */
export function compileUserQuery(query: string, options: { filters?: readonly FieldPredicate[]; limit: number }): { text: string; values: unknown[] } {
  const body = checkUserSql(query);
  const params = new SqlParams();
  const where = (options.filters ?? []).map(({ field, predicate }) => predicateSql(`${USER_SOURCE_ALIAS}.${quoteIdentifier(field)}`, predicate, params));
  const inner =
    `SELECT * FROM (\n${body}\n) AS ${USER_SOURCE_ALIAS}` +
    (where.length > 0 ? `\nWHERE ${where.join(" AND ")}` : "") +
    `\nLIMIT ${params.add(options.limit, "int")}`;
  return { text: asJsonRows(inner), values: params.values };
}

/**
 * Each row of `inner` as one JSON object column `row`. The whole-row reference is written
 * `alias.*` and the alias is one no manifest uses: a bare `row_to_json(q)` would read a user
 * column named `q` instead of the row (`function row_to_json(text) does not exist`).
 */
export function asJsonRows(inner: string): string {
  return `SELECT row_to_json(_quarry_row.*) AS row FROM (\n${inner}\n) AS _quarry_row`;
}

/** A column name as a quoted identifier, whatever characters it holds. */
function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function checkUserSql(query: string): string {
  try {
    return checkSqlQuery(query);
  } catch (error) {
    throw new QueryError("bad_sql", error instanceof Error ? error.message : "unreadable SQL");
  }
}
