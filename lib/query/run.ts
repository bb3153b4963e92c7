import "server-only";
import type { Dataset, ParsedDashboard, WidgetManifest } from "@/lib/manifest/schema";
import type { TenantScope } from "@/lib/db/tenant";
import { type DatasetSelection, type FieldPredicate, USER_SOURCE_ALIAS, compileSelection, compileUserQuery, selectDataset } from "./compile";
import { aggregateDemoRows, demoColumn, sampleOrders } from "./demo";
import { forbidden } from "@/lib/errors";
import { QueryError } from "./errors";
import { ANONYMOUS_VIEWER, type FieldViewer, type FieldVisibility, fieldVisibility, restrictionNotice, viewedDataset } from "./field-policy";
import { BatchTransactionSpent, type StatementRunner, runReadOnly } from "./execute";
import { type FilterCondition, FilterValueError, filterRows, toPredicate, widgetConditions } from "./filters";
import { applyFormulaSteps, planFormulaMetrics } from "./formula/plan";
import { KPI_CATALOG } from "./kpi-catalog";
import { type BuiltRollup, routeSelection } from "./rollup-routing";
import { SharedScans } from "./shared-scan";
import { sqlWidgetColumns } from "./sql-columns";

export const DEFAULT_ROW_CAP = 5_000;

/** One empty rollup list, so a plan asked twice without rollups computes its selection once. */
const NO_ROLLUPS: readonly BuiltRollup[] = Object.freeze([]);

export interface WidgetQueryInput {
  scope: TenantScope;
  dashboard: ParsedDashboard;
  widgetId: string;
  /** Current value of each filter widget, by filter widget id; absent ids use the filter's default, null clears it. */
  filterValues: Readonly<Record<string, unknown>>;
  now: Date;
  /** The organization's IANA time zone, for date filters. */
  timeZone: string;
  /**
   * Who is looking: the dataset's field policies decide what the widget may select for them (./field-policy.ts).
   * Absent: no role and no attributes (ANONYMOUS_VIEWER), so a caller that does not say sees the least.
   */
  viewer?: FieldViewer;
  rowCap?: number;
  /** Where the statements run: a batch's transaction (runReadOnlyBatch), else one transaction each. */
  runner?: StatementRunner;
  statementTimeoutMs?: number;
  /** The request's shared scans (sharedScans): a widget in one takes its rows from its group's statement. */
  shared?: SharedScans;
  /** Built, fresh rollups the dashboard declares (lib/rollups): a widget one of them answers exactly reads it instead of the tables. */
  rollups?: readonly BuiltRollup[];
  /** The widget's plan, when the caller made it already (planWidget over this same input). */
  plan?: WidgetPlan;
}

/** Which source answered a widget's statement: a rollup (by its name in the manifest) or the tables. */
export type AnswerSource = { kind: "rollup"; name: string } | { kind: "base" };

export interface WidgetQueryResult {
  columns: string[];
  rows: Record<string, unknown>[];
  /** More rows matched than the row cap or the dataset's own `limit`; `rows` holds the first of them. */
  truncated: boolean;
  /** The dataset's own `limit` when it is what cut the rows (`truncated`), so the widget can name it. */
  limit?: number;
  /** Where a dataset widget's rows came from; absent for widgets without a warehouse statement. */
  source?: AnswerSource;
  /** Why the widget shows no data for this viewer: it needs fields their role or attributes may not see (field policies). */
  restricted?: string;
}

/** What a widget's plan is made from: a request's view of one widget, before it runs. */
export type WidgetPlanInput = Omit<WidgetQueryInput, "runner" | "statementTimeoutMs" | "shared" | "plan">;

/** A filter condition on the widget with its predicate, or the reason its value cannot be used. */
interface PlannedCondition {
  condition: FilterCondition;
  predicate: FieldPredicate["predicate"] | FilterValueError;
}

/** A dataset widget's routed selection (datasetSelection), or the QueryError it meets, or null when it needs no statement. */
type RoutedSelection = { selection: DatasetSelection; source: AnswerSource; rollup?: BuiltRollup } | null;

/**
 * Everything the engine decides about one widget in one request, decided once (issue 46 §2): its
 * fields, its filter conditions with their predicates, its dataset and its selection routed to a
 * rollup or the tables. The result cache's key (its meaning), the shared scans (its selection), the
 * rollups' status (its source) and the run all read the same plan, so they cannot disagree.
 */
export class WidgetPlan {
  readonly widget: WidgetManifest | undefined;
  /** The widget's dataset (or KPI) as the viewer sees it (field policies), the QueryError for an unknown one, or undefined for widgets without one. */
  private readonly viewed: ViewedDataset | QueryError | undefined;
  /** The fields a `*` binding can reach (widgetFields): a field the viewer may not see is not one of them. */
  readonly fields: ReadonlySet<string> | null;
  private readonly conditions: readonly PlannedCondition[];
  /** The columns the widget selects for this viewer: its `columns` less those a table may leave out (field policies). */
  readonly columns: readonly string[] | undefined;
  /** Set when the widget needs a field the viewer may not see: what it says instead of its data. */
  readonly restricted: string | undefined;
  private routed: { rollups: readonly BuiltRollup[]; outcome: RoutedSelection | QueryError } | undefined;

  /** Throws Forbidden (403) when a filter value the request sets applies to a field the viewer may not see or sees masked. */
  constructor(readonly input: WidgetPlanInput) {
    this.widget = input.dashboard.widgetsById.get(input.widgetId);
    this.viewed = this.widget ? viewWidgetDataset(input, this.widget) : undefined;
    this.fields = this.widget ? widgetFields(this.widget, this.viewed) : null;
    const context = { now: input.now, timeZone: input.timeZone };
    this.conditions = this.widget
      ? widgetConditions(input.dashboard.widgetsById.values(), this.widget, input.filterValues, this.fields).map((condition) => {
          try {
            return { condition, predicate: toPredicate(condition, context) };
          } catch (error) {
            if (error instanceof FilterValueError) return { condition, predicate: error };
            throw error;
          }
        })
      : [];
    const policy = this.viewed && !(this.viewed instanceof QueryError) && this.widget ? restrictWidget(this.widget, this.viewed, this.conditions.map((c) => c.condition), input.filterValues) : undefined;
    this.columns = policy ? policy.columns : this.widget?.spec.data?.columns;
    this.restricted = policy?.restricted;
  }

  /**
   * What the field policies decided for this viewer on the widget's dataset, as plain JSON (each field not
   * plainly visible, with its mask or why it is absent): two viewers share a cached answer only when it is
   * the same (lib/dashboards/result-cache.ts), so a policy difference never shares one.
   */
  get visibility(): [string, FieldVisibility][] {
    if (!this.viewed || this.viewed instanceof QueryError) return [];
    return [...this.viewed.visibility].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /**
   * What the filter values mean to this widget, as plain JSON: every condition that applies once
   * defaults are resolved (a cleared filter has none, a filter left out has its default's), each
   * with the predicate the engine applies (a date expression as the concrete bounds it resolves to
   * in the zone at `now`, so "last month" means another month when the month changes). Two filter
   * states have the same meaning exactly when the engine applies the same conditions, which makes
   * it the result cache's key. A value the engine cannot use keeps its raw form: its query fails
   * with the value's message, and failures are not cached.
   */
  get meaning(): unknown[] {
    return this.conditions
      .map(({ condition, predicate }) => [condition.source, condition.field, condition.operator, condition.required, predicate instanceof FilterValueError ? { kind: "unusable", value: condition.value } : predicate])
      .sort((a, b) => (JSON.stringify(a.slice(0, 3)) < JSON.stringify(b.slice(0, 3)) ? -1 : 1));
  }

  /** The conditions with their predicates; QueryError for an unusable value. */
  predicates(): (FilterCondition & FieldPredicate)[] {
    return this.conditions.map(({ condition, predicate }) => {
      if (predicate instanceof FilterValueError) throw new QueryError("bad_filter_value", predicate.message);
      return { ...condition, predicate };
    });
  }

  /** A `dataset` or `kpi` widget's selection under `rollups` (computed once per set of rollups); throws the QueryError it meets. */
  selection(rollups: readonly BuiltRollup[] = this.input.rollups ?? NO_ROLLUPS): RoutedSelection {
    if (this.routed?.rollups !== rollups) {
      let outcome: RoutedSelection | QueryError;
      try {
        outcome = this.restricted !== undefined ? null : datasetSelection(this.dataset(), this.columns, this.predicates(), this.input.rowCap ?? DEFAULT_ROW_CAP, rollups);
      } catch (error) {
        if (!(error instanceof QueryError)) throw error;
        outcome = error;
      }
      this.routed = { rollups, outcome };
    }
    if (this.routed.outcome instanceof QueryError) throw this.routed.outcome;
    return this.routed.outcome;
  }

  /** The widget's dataset (or KPI) as the viewer sees it; throws the QueryError of an unknown one. */
  dataset(): Dataset {
    if (this.viewed === undefined) throw new QueryError("bad_manifest", `Widget '${this.input.widgetId}' reads no dataset`);
    if (this.viewed instanceof QueryError) throw this.viewed;
    return this.viewed.dataset;
  }

  /** Whether the widget reads a SQL dataset or catalog KPI. */
  get readsDataset(): boolean {
    const kind = this.widget?.spec.data?.kind;
    return kind === "dataset" || kind === "kpi";
  }
}

export const planWidget = (input: WidgetPlanInput) => new WidgetPlan(input);

/**
 * The data of one widget, filtered by the current filter values. Self-contained per widget,
 * so a batch endpoint calls it once per widget and one widget's QueryError does not affect
 * the others. Throws QueryError for a widget-level failure.
 */
export async function runWidgetQuery(input: WidgetQueryInput): Promise<WidgetQueryResult> {
  const plan = input.plan ?? planWidget(input);
  const widget = plan.widget;
  if (!widget) throw new QueryError("unknown_widget", `No widget '${input.widgetId}' in this dashboard`);
  const data = widget.spec.data;
  if (!data) return { columns: [], rows: [], truncated: false };
  const cap = input.rowCap ?? DEFAULT_ROW_CAP;
  const predicates = plan.predicates();

  switch (data.kind) {
    case "static":
    case "demo": {
      const rows = data.kind === "static" ? (data.rows ?? []).map((r) => ({ ...r })) : sampleOrders(input.now);
      const available = data.kind === "static" ? Object.keys(Object.assign({}, ...rows)) : Object.keys(rows[0] ?? {});
      return inMemory(rows, available, data.columns, predicates, input.timeZone, cap);
    }
    case "sql":
      return runUserQuery(data.query ?? "", data.columns, predicates, input, cap);
    case "dataset":
    case "kpi":
      if (plan.restricted !== undefined) return { columns: [], rows: [], truncated: false, restricted: plan.restricted };
      return runDataset(plan.dataset(), plan.columns, predicates, plan, input, cap);
  }
}

/** The dataset (or catalog KPI) of a `dataset` or `kpi` widget. */
function widgetDataset(input: { dashboard: Pick<ParsedDashboard, "widgetsById" | "datasets">; widgetId: string }): Dataset {
  const data = input.dashboard.widgetsById.get(input.widgetId)!.spec.data!;
  const dataset = data.kind === "kpi" ? KPI_CATALOG.get(data.kpi ?? "")?.dataset : input.dashboard.datasets.get(data.dataset ?? "");
  if (!dataset) throw new QueryError("bad_manifest", data.kind === "kpi" ? `Unknown KPI '${data.kpi}'` : `Unknown dataset '${data.dataset}'`);
  return resolveKpiSource(dataset);
}

/**
 * The fields a `*` binding can reach on `widget`: its dataset's (or KPI's) dimensions and metrics, or the
 * columns an `sql` widget's text names (lib/query/sql-columns.ts); null when only running it would tell.
 * A `*` binding on another field does not apply to the widget. The engine and the result cache's key both
 * read it from the widget's plan, so such a binding neither runs nor splits the cache (a date filter does
 * not make a widget without dates miss).
 */
function widgetFields(widget: WidgetManifest, viewed: ViewedDataset | QueryError | undefined): ReadonlySet<string> | null {
  if (widget.spec.data?.kind === "sql") return sqlWidgetColumns(widget);
  // An unknown dataset or KPI meets its error when the widget runs.
  if (!viewed || viewed instanceof QueryError) return null;
  return new Set([...viewed.dataset.dimensions.map((d) => d.id), ...viewed.dataset.metrics.map((m) => m.id)]);
}

/** A widget's dataset under the viewer's field policies, with what they decided per field. */
interface ViewedDataset {
  dataset: Dataset;
  visibility: ReadonlyMap<string, FieldVisibility>;
}

function viewWidgetDataset(input: WidgetPlanInput, widget: WidgetManifest): ViewedDataset | QueryError | undefined {
  const kind = widget.spec.data?.kind;
  if (kind !== "dataset" && kind !== "kpi") return undefined;
  try {
    const written = widgetDataset(input);
    const visibility = fieldVisibility(written, input.viewer ?? ANONYMOUS_VIEWER);
    return { dataset: viewedDataset(written, visibility), visibility };
  } catch (error) {
    if (error instanceof QueryError) return error;
    throw error;
  }
}

const TABLES: ReadonlySet<string> = new Set(["table", "tabulator"]);

/**
 * Field policies on one widget (docs/datasets.md "Field policies"). A condition on a field the viewer may not
 * see or sees masked would reveal it (a filter on the original value): one the request sets is refused
 * (403); one the author's default sets makes the widget say so. A widget that names fields the viewer may not
 * see (its columns or mappings) says it needs them, except a table, which leaves those columns out. A widget
 * naming no columns selects the fields the viewer sees.
 */
function restrictWidget(
  widget: WidgetManifest,
  viewed: ViewedDataset,
  conditions: readonly FilterCondition[],
  filterValues: Readonly<Record<string, unknown>>,
): { columns: readonly string[] | undefined; restricted?: string } {
  const data = widget.spec.data!;
  if (viewed.visibility.size === 0) return { columns: data.columns };
  const why = (id: string) => viewed.visibility.get(id);
  const filtered: { id: string; reason: "hidden" | "restricted" }[] = [];
  for (const condition of conditions) {
    const visibility = why(condition.field);
    if (!visibility || visibility.kind === "visible") continue;
    const reason = visibility.kind === "masked" ? "restricted" : visibility.reason;
    if (Object.hasOwn(filterValues, condition.source) && filterValues[condition.source] !== null) {
      const shown = visibility.kind === "masked" ? "masked" : reason;
      throw forbidden(`Filter '${condition.source}' cannot be applied to '${widget.metadata.id}': its field '${condition.field}' is ${shown} for you`);
    }
    filtered.push({ id: condition.field, reason });
  }
  if (filtered.length > 0) return { columns: data.columns, restricted: restrictionNotice(filtered) };
  const absent = (id: string) => {
    const visibility = why(id);
    return visibility?.kind === "absent" ? [{ id, reason: visibility.reason }] : [];
  };
  const named = data.columns ?? [];
  const missing = named.flatMap(absent);
  if (TABLES.has(widget.spec.component) && named.length > 0) {
    const kept = named.filter((id) => absent(id).length === 0);
    return kept.length > 0 ? { columns: kept } : { columns: named, restricted: restrictionNotice(missing) };
  }
  const needed = [...new Set([...named, ...Object.values(data.mappings ?? {}).flat()])].flatMap(absent);
  return needed.length > 0 ? { columns: data.columns, restricted: restrictionNotice(needed) } : { columns: data.columns };
}

/**
 * The shared scans of a request's widgets (lib/query/shared-scan.ts): the widgets that read a SQL
 * dataset, grouped by source and filter conditions, each by its plan's selection under `rollups`. A
 * widget whose selection cannot be made (an unknown dataset, an unusable filter value) is left out and
 * meets its error when it runs.
 */
export function sharedScans(plans: readonly WidgetPlan[], rollups: readonly BuiltRollup[] = NO_ROLLUPS): SharedScans {
  const selections = new Map<string, DatasetSelection>();
  for (const plan of plans) {
    if (!plan.readsDataset) continue;
    try {
      const routed = plan.selection(rollups);
      if (routed) selections.set(plan.input.widgetId, routed.selection);
    } catch (error) {
      if (!(error instanceof QueryError)) throw error;
    }
  }
  return new SharedScans(selections);
}

/**
 * Where a widget's statement would read from under its plan (its filter values, the rollups given), by the
 * same selection and routing runWidgetQuery uses, without running anything: the rollup that answers it,
 * the tables, or null for a widget with no warehouse statement (not a dataset or KPI, a demo dataset,
 * empty by a required condition) or one whose selection fails (it meets its error when it runs). The
 * editor's list of which widgets each rollup serves (lib/dashboards/dashboard-rollups.ts) is this, so it
 * cannot disagree with the queries.
 */
export function plannedSource(plan: WidgetPlan): { kind: "rollup"; rollup: BuiltRollup } | { kind: "base" } | null {
  if (!plan.readsDataset) return null;
  try {
    const planned = plan.selection();
    if (!planned) return null;
    return planned.rollup ? { kind: "rollup", rollup: planned.rollup } : { kind: "base" };
  } catch (error) {
    if (!(error instanceof QueryError)) throw error;
    return null;
  }
}

/**
 * What a widget selects from a SQL dataset, read from the smallest of `rollups` that answers it
 * exactly (lib/query/rollup-routing.ts) or else from the tables; null when it needs no statement (empty by a
 * required condition, or a demo dataset).
 */
function datasetSelection(
  dataset: Dataset,
  columns: readonly string[] | undefined,
  predicates: readonly (FilterCondition & FieldPredicate)[],
  cap: number,
  rollups: readonly BuiltRollup[],
): RoutedSelection {
  const fields = new Set([...dataset.dimensions.map((d) => d.id), ...dataset.metrics.map((m) => m.id)]);
  const wanted = columns && columns.length > 0 ? [...columns] : [...fields];
  const { applicable, empty } = partition(predicates, fields);
  if (empty || (dataset.from === undefined && dataset.query === undefined)) return null;
  // One row past the cap (or past the dataset's own `limit`, lib/query/compile.ts) tells a cut result from one that fits.
  const selection = selectDataset(dataset, { columns: wanted, filters: applicable, limit: cap + 1 });
  const routed = routeSelection(selection, rollups);
  return routed ? { selection: routed.selection, source: { kind: "rollup", name: routed.rollup.name }, rollup: routed.rollup } : { selection, source: { kind: "base" } };
}

/** A dataset with `kpi:` is the catalog KPI plus the dataset's own formula metrics. */
function resolveKpiSource(dataset: Dataset): Dataset {
  if (dataset.kpi === undefined) return dataset;
  const kpi = KPI_CATALOG.get(dataset.kpi);
  if (!kpi) throw new QueryError("bad_manifest", `Unknown KPI '${dataset.kpi}'`);
  return { ...kpi.dataset, id: dataset.id, metrics: [...kpi.dataset.metrics, ...dataset.metrics.filter((m) => m.type === "formula")], order_by: dataset.order_by, limit: dataset.limit };
}

/** Splits conditions into those on the dataset's fields and reports whether a required one names a missing field. */
function partition(predicates: readonly (FilterCondition & FieldPredicate)[], fields: ReadonlySet<string>): { applicable: FieldPredicate[]; empty: boolean } {
  const applicable: FieldPredicate[] = [];
  for (const p of predicates) {
    if (fields.has(p.field)) applicable.push({ field: p.field, predicate: p.predicate });
    else if (p.required) return { applicable, empty: true };
  }
  return { applicable, empty: false };
}

/**
 * An `sql` widget: its statement wrapped as a subquery with the filter conditions in WHERE, so
 * the cap applies to matching rows. Its columns are known only once it runs, so a condition on
 * a column it lacks comes back as an error naming the column: a required one (a `filters`
 * entry, a binding naming the widget) empties the widget, a `*` binding is dropped and the
 * statement runs again without it.
 */
async function runUserQuery(query: string, columns: readonly string[] | undefined, predicates: readonly (FilterCondition & FieldPredicate)[], input: WidgetQueryInput, cap: number): Promise<WidgetQueryResult> {
  let pushed = [...predicates];
  for (;;) {
    const { text, values } = compileUserQuery(query, { filters: pushed, limit: cap + 1 });
    let rows: Record<string, unknown>[];
    try {
      rows = await runStatement(input, text, values);
    } catch (error) {
      const missing = error instanceof QueryError ? pushed.filter((p) => error.sqlMessage === `column ${USER_SOURCE_ALIAS}.${p.field} does not exist`) : [];
      if (missing.length === 0) throw error;
      if (missing.some((p) => p.required)) return { columns: columns && columns.length > 0 ? [...columns] : [], rows: [], truncated: false };
      pushed = pushed.filter((p) => !missing.includes(p));
      continue;
    }
    // Columns of user SQL are known only from its rows; with no rows, only what the manifest names.
    const wanted = columns && columns.length > 0 ? [...columns] : rows.length > 0 ? Object.keys(rows[0]) : [];
    return { columns: wanted, rows: rows.slice(0, cap).map((row) => project(row, wanted)), truncated: rows.length > cap };
  }
}

async function runDataset(
  dataset: Dataset,
  columns: readonly string[] | undefined,
  predicates: readonly (FilterCondition & FieldPredicate)[],
  plan: WidgetPlan,
  input: WidgetQueryInput,
  cap: number,
): Promise<WidgetQueryResult> {
  const fields = new Set([...dataset.dimensions.map((d) => d.id), ...dataset.metrics.map((m) => m.id)]);
  const wanted = columns && columns.length > 0 ? [...columns] : [...fields];
  const { applicable, empty } = partition(predicates, fields);
  if (empty) return { columns: wanted, rows: [], truncated: false };

  if (dataset.from === undefined && dataset.query === undefined) return runDemoDataset(dataset, wanted, applicable, input, cap);

  const { selection, source } = plan.selection(input.rollups ?? NO_ROLLUPS)!;
  const run = (text: string, values: readonly unknown[]) => runStatement(input, text, values);
  let rows = await input.shared?.rows(input.widgetId, selection, run, (error) => error instanceof BatchTransactionSpent);
  if (!rows) {
    const compiled = compileSelection(selection);
    rows = await run(compiled.text, compiled.values);
  }
  const limit = Math.min(cap, dataset.limit ?? cap);
  const truncated = rows.length > limit;
  const kept = rows.slice(0, limit);
  applyFormulaSteps(kept, selection.formulas);
  const filtered = filterRows(kept, selection.postFilters, input.timeZone);
  const cutByDatasetLimit = truncated && limit === dataset.limit;
  return { columns: selection.columns, rows: filtered.map((row) => project(row, selection.columns)), truncated, ...(cutByDatasetLimit && { limit }), source };
}

function runStatement(input: WidgetQueryInput, text: string, values: readonly unknown[]): Promise<Record<string, unknown>[]> {
  if (input.runner) return input.runner(text, values, input.statementTimeoutMs);
  return runReadOnly(input.scope, text, values, { timeZone: input.timeZone, statementTimeoutMs: input.statementTimeoutMs });
}

/** A dataset without a source: demo rows, filtered on dimensions, grouped in memory, then formulas. */
function runDemoDataset(dataset: Dataset, wanted: string[], applicable: FieldPredicate[], input: WidgetQueryInput, cap: number): WidgetQueryResult {
  const dimensionColumns = new Map(dataset.dimensions.map((d) => [d.id, demoColumn(d.column)]));
  const before = applicable.filter((p) => dimensionColumns.has(p.field)).map((p) => ({ field: dimensionColumns.get(p.field) as string, predicate: p.predicate }));
  const after = applicable.filter((p) => !dimensionColumns.has(p.field));
  const selected = { ...dataset, dimensions: dataset.dimensions.filter((d) => wanted.includes(d.id) || !dataset.metrics.some((m) => m.type === "sql")) };
  const grouped = aggregateDemoRows(filterRows(sampleOrders(input.now), before, input.timeZone), selected);
  const formulas = dataset.metrics.filter((m) => m.type === "formula");
  const { steps } = planFormulaMetrics(formulas, new Set([...dataset.dimensions.map((d) => d.id), ...dataset.metrics.filter((m) => m.type === "sql").map((m) => m.id)]));
  applyFormulaSteps(grouped, steps);
  const matching = filterRows(grouped, after, input.timeZone);
  return { columns: wanted, rows: matching.slice(0, cap).map((row) => project(row, wanted)), truncated: matching.length > cap };
}

function inMemory(
  rows: Record<string, unknown>[],
  available: readonly string[],
  columns: readonly string[] | undefined,
  predicates: readonly (FilterCondition & FieldPredicate)[],
  timeZone: string,
  cap: number,
): WidgetQueryResult {
  const wanted = columns && columns.length > 0 ? [...columns] : [...available];
  const { applicable, empty } = partition(predicates, new Set(available));
  if (empty) return { columns: wanted, rows: [], truncated: false };
  const matching = filterRows(rows, applicable, timeZone);
  return { columns: wanted, rows: matching.slice(0, cap).map((row) => project(row, wanted)), truncated: matching.length > cap };
}

function project(row: Record<string, unknown>, columns: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const column of columns) out[column] = Object.hasOwn(row, column) ? row[column] : null;
  return out;
}
