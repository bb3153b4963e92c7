import { SAMPLE_ORDER_COLUMNS, demoAggregate, demoColumn } from "@/lib/query/demo";
import { planFormulaMetrics } from "@/lib/query/formula/plan";
import { KPI_CATALOG, kpiColumns } from "@/lib/query/kpi-catalog";
import { type RollupScopeCheck, rollupProblems } from "@/lib/query/rollup-definition";
import { SqlTextError, checkSqlFragment, checkSqlQuery, unqualifiedColumns } from "@/lib/query/sql-text";
import { datasetSourceSql } from "@/lib/query/compile";

/**
 * What SQL a manifest may hold beyond being well formed, where a check is at hand: the server
 * passes its parser-based allow-list (lib/query/sql-allow-list.ts); the browser's editor has
 * only the lexer, and the server's answer on save. Each function throws an error with the
 * message and its `position` in the text.
 */
export interface SqlPolicy {
  query(text: string): void;
  /** An expression as it runs: selected from the dataset's source (absent where that source did not pass). */
  expression(text: string, source?: string): void;
  source(text: string): void;
}
/** The server's policy also checks that a rollup cannot widen a location scope (lib/query/rollup-scope.ts, on PostgreSQL's parser). */
export interface ServerSqlPolicy extends SqlPolicy {
  rollup: RollupScopeCheck;
}

import type { ManifestError } from "@/lib/manifest/errors";
import { type Component, type DashboardManifest, type Dataset, type WidgetManifest } from "@/lib/manifest/schema";
import type { ManifestPath, ManifestSource } from "@/lib/manifest/source";

/** A widget manifest and where it sits: its own document, or an entry of `spec.widgets`. */
export interface PlacedWidget {
  manifest: WidgetManifest;
  document: number;
  path: ManifestPath;
}

type Report = (document: number, path: ManifestPath, message: string, options?: { key?: boolean; offset?: number }) => void;

/** Components whose display block is required, and which carry data. */
const DISPLAY_REQUIRED: readonly Component[] = ["filter", "text", "image", "markdown"];
const DATA_REQUIRED: readonly Component[] = ["echarts", "kpi", "table", "tabulator"];

/**
 * Checks what the schema cannot: ids unique and referenced ids declared, sources and
 * SQL well formed, formula metrics resolvable and acyclic, display blocks matching the
 * component, mappings naming columns that exist. Every problem is collected.
 * `invalidWidgetIds` are widgets that exist but failed the schema: their own errors are
 * reported already, so references to them are not reported again as missing.
 */
export function checkReferences(
  dashboard: DashboardManifest,
  widgets: readonly PlacedWidget[],
  source: ManifestSource,
  invalidWidgetIds: ReadonlySet<string> = new Set(),
  sqlPolicy?: SqlPolicy,
  uncheckedDatasetIds: ReadonlySet<string> = new Set(),
): ManifestError[] {
  const errors: ManifestError[] = [];
  const report: Report = (document, path, message, options) => errors.push(source.error(document, path, message, options));

  const datasetColumns = new Map<string, Set<string>>();
  dashboard.spec.datasets.forEach((dataset, i) => {
    const path = ["spec", "datasets", i];
    if (datasetColumns.has(dataset.id)) report(0, [...path, "id"], `duplicate dataset id '${dataset.id}'`);
    datasetColumns.set(dataset.id, checkDataset(dataset, path, report, sqlPolicy));
  });

  const widgetsById = new Map<string, PlacedWidget>();
  for (const placed of widgets) {
    const id = placed.manifest.metadata.id;
    if (widgetsById.has(id)) report(placed.document, [...placed.path, "metadata", "id"], `duplicate widget id '${id}'`);
    else widgetsById.set(id, placed);
  }

  const tabIds = new Set<string>();
  dashboard.spec.tabs.forEach((tab, i) => {
    if (tabIds.has(tab.id)) report(0, ["spec", "tabs", i, "id"], `duplicate tab id '${tab.id}'`);
    tabIds.add(tab.id);
    tab.widgets.forEach((id, j) => {
      if (!widgetsById.has(id) && !invalidWidgetIds.has(id)) report(0, ["spec", "tabs", i, "widgets", j], `no widget has id '${id}'`);
    });
  });
  for (const band of ["header", "footer"] as const) {
    dashboard.spec.config?.[band]?.widgets.forEach((id, j) => {
      if (!widgetsById.has(id) && !invalidWidgetIds.has(id)) report(0, ["spec", "config", band, "widgets", j], `no widget has id '${id}'`);
    });
  }

  for (const placed of widgets) checkWidget(placed, { datasetColumns, uncheckedDatasetIds, widgetsById, invalidWidgetIds, sqlPolicy }, report);
  return errors;
}

/** Returns the dataset's column ids (even when some parts are invalid, so widgets can still be checked). */
export function checkDataset(dataset: Dataset, path: ManifestPath, report: Report, sqlPolicy: SqlPolicy | undefined): Set<string> {
  const sources = (["from", "query", "kpi"] as const).filter((key) => dataset[key] !== undefined);
  if (sources.length > 1) report(0, [...path, sources[1]], `a dataset has one source; found ${sources.join(" and ")}`, { key: true });
  const columns = new Set<string>();

  const kpi = dataset.kpi !== undefined ? KPI_CATALOG.get(dataset.kpi) : undefined;
  if (dataset.kpi !== undefined) {
    if (!kpi) report(0, [...path, "kpi"], `unknown KPI '${dataset.kpi}'; the catalog has ${[...KPI_CATALOG.keys()].join(", ")}`);
    else for (const column of kpiColumns(kpi)) columns.add(column);
  }
  const isSql = dataset.from !== undefined || dataset.query !== undefined;
  const isDemo = sources.length === 0;

  let expressionSource: string | undefined;
  const sqlCheck = (text: string, fieldPath: ManifestPath, kind: keyof SqlPolicy) => checkSqlText(text, kind, sqlPolicy, (message, offset) => report(0, fieldPath, message, { offset }), expressionSource);
  // Expressions are checked where they run, over the dataset's source, once that source passed.
  if (dataset.from !== undefined && sqlCheck(dataset.from, [...path, "from"], "source")) expressionSource = datasetSourceSql(dataset);
  if (dataset.query !== undefined && sqlCheck(dataset.query, [...path, "query"], "query")) expressionSource = datasetSourceSql({ ...dataset, query: checkSqlQuery(dataset.query) });

  // A field policy's mask is selected in the field's place (lib/query/field-policy.ts): the same checks as the column it stands for.
  const checkMask = (mask: string | undefined, fieldPath: ManifestPath) => {
    if (mask === undefined) return;
    const maskPath = [...fieldPath, "access", "mask"];
    if (!isSql) return report(0, maskPath, "a mask is SQL over the dataset's rows: it needs a `from` or `query` dataset");
    if (!sqlCheck(mask, maskPath, "expression")) return;
    for (const bare of unqualifiedColumns(mask)) report(0, maskPath, `column '${bare.name}' must be fully qualified, e.g. <table>.${bare.name}`, { offset: bare.at });
  };
  const declare = (id: string, idPath: ManifestPath) => {
    if (columns.has(id)) report(0, idPath, `duplicate column id '${id}' (dimensions and metrics share one namespace)`);
    columns.add(id);
  };
  dataset.dimensions.forEach((dimension, j) => {
    const dimPath = [...path, "dimensions", j];
    declare(dimension.id, [...dimPath, "id"]);
    if (kpi) return report(0, dimPath, "a kpi dataset takes its dimensions from the catalog");
    checkMask(dimension.access?.mask, dimPath);
    if (isDemo) {
      if (!demoColumn(dimension.column)) {
        report(0, [...dimPath, "column"], `a dataset without a source reads demo data: column must be sample_orders.<${SAMPLE_ORDER_COLUMNS.join("|")}>`);
      }
      return;
    }
    if (sqlCheck(dimension.column, [...dimPath, "column"], "expression") && isSql) {
      for (const bare of unqualifiedColumns(dimension.column)) {
        report(0, [...dimPath, "column"], `column '${bare.name}' must be fully qualified, e.g. <table>.${bare.name}`, { offset: bare.at });
      }
    }
  });

  const formulas: { id: string; expression: string; index: number }[] = [];
  dataset.metrics.forEach((metric, j) => {
    const metricPath = [...path, "metrics", j];
    declare(metric.id, [...metricPath, "id"]);
    if (metric.type === "formula") {
      if (metric.access?.mask !== undefined) report(0, [...metricPath, "access", "mask"], "a formula metric cannot be masked (a mask is SQL); use roles, attributes or hidden, or mask the sql metrics it reads");
      return void formulas.push({ id: metric.id, expression: metric.expression, index: j });
    }
    if (kpi) return report(0, metricPath, "a kpi dataset may add formula metrics only");
    checkMask(metric.access?.mask, metricPath);
    if (isDemo) {
      if (!demoAggregate(metric.expression)) {
        report(0, [...metricPath, "expression"], "a demo dataset's sql metric must be sum, avg, min or max of sample_orders.<column>, or count(*)");
      }
      return;
    }
    if (sqlCheck(metric.expression, [...metricPath, "expression"], "expression")) {
      for (const bare of unqualifiedColumns(metric.expression)) {
        report(0, [...metricPath, "expression"], `column '${bare.name}' must be fully qualified, e.g. <table>.${bare.name}`, { offset: bare.at });
      }
    }
  });

  const base = new Set([...columns].filter((c) => !formulas.some((f) => f.id === c)));
  for (const problem of planFormulaMetrics(formulas, base).errors) {
    const index = formulas.find((f) => f.id === problem.metricId)?.index ?? 0;
    report(0, [...path, "metrics", index, "expression"], problem.message, { offset: problem.position });
  }
  dataset.order_by?.forEach((order, j) => {
    if (!columns.has(order.column)) report(0, [...path, "order_by", j, "column"], `unknown column '${order.column}'`);
  });
  const rollupNames = new Set<string>();
  dataset.rollups?.forEach((rollup, j) => {
    const rollupPath = [...path, "rollups", j];
    if (rollupNames.has(rollup.name)) report(0, [...rollupPath, "name"], `duplicate rollup name '${rollup.name}'`);
    rollupNames.add(rollup.name);
    const scopeCheck = sqlPolicy && "rollup" in sqlPolicy ? (sqlPolicy as ServerSqlPolicy).rollup : undefined;
    for (const problem of rollupProblems(dataset, rollup, scopeCheck)) report(0, [...rollupPath, ...problem.key], problem.message);
  });
  return columns;
}

interface WidgetContext {
  datasetColumns: ReadonlyMap<string, Set<string>>;
  /** Shared datasets named by ref and not at hand (parse.ts): their columns are unknown until run. */
  uncheckedDatasetIds: ReadonlySet<string>;
  widgetsById: ReadonlyMap<string, PlacedWidget>;
  invalidWidgetIds: ReadonlySet<string>;
  sqlPolicy: SqlPolicy | undefined;
}

/** The lexer's check, then the policy's where there is one; reports the first problem. True when the text passed. */
function checkSqlText(text: string, kind: keyof SqlPolicy, policy: SqlPolicy | undefined, report: (message: string, offset: number) => void, expressionSource?: string): boolean {
  try {
    if (kind === "query") checkSqlQuery(text);
    else checkSqlFragment(text);
    if (kind === "expression") policy?.expression(text, expressionSource);
    else policy?.[kind](text);
    return true;
  } catch (error) {
    const position = (error as { position?: unknown }).position;
    if (!(error instanceof SqlTextError) && typeof position !== "number") throw error;
    report((error as Error).message, typeof position === "number" ? position : 0);
    return false;
  }
}

function checkWidget({ manifest, document, path }: PlacedWidget, context: WidgetContext, report: Report): void {
  const spec = manifest.spec;
  const at = (...rest: (string | number)[]) => [...path, "spec", ...rest];

  for (const key of Object.keys(spec.display) as (keyof typeof spec.display)[]) {
    if (key !== spec.component && spec.display[key] !== undefined) {
      report(document, at("display", key), `display.${key} applies to component ${key}, not ${spec.component}`, { key: true });
    }
  }
  if (DISPLAY_REQUIRED.includes(spec.component) && spec.display[spec.component as keyof typeof spec.display] === undefined) {
    report(document, at("display"), `component ${spec.component} needs display.${spec.component}`);
  }
  if (DATA_REQUIRED.includes(spec.component) && !spec.data) report(document, at("component"), `component ${spec.component} needs a data block`);
  const available = spec.data ? checkData(manifest, document, path, context, report) : null;
  const known = (column: string) => available === null || available.has(column);
  const data = spec.data;
  data?.columns?.forEach((column, i) => {
    if (!known(column)) report(document, at("data", "columns", i), `unknown column '${column}'; available: ${[...(available ?? [])].join(", ")}`);
  });
  const usable = data?.columns ? new Set(data.columns) : available;
  for (const [role, target] of Object.entries(data?.mappings ?? {})) {
    (Array.isArray(target) ? target : [target]).forEach((column, i) => {
      if (usable && !usable.has(column)) {
        report(document, at("data", "mappings", role, ...(Array.isArray(target) ? [i] : [])), `mapping '${role}' names '${column}', which is not among the widget's columns`);
      }
    });
  }
  const displayColumns: [ManifestPath, string | undefined][] = [
    [at("display", "kpi", "delta", "column"), spec.display.kpi?.delta?.column],
    [at("display", "tabulator", "group_by"), spec.display.tabulator?.group_by],
    ...(spec.display.tabulator?.frozen_columns ?? []).map((c, i): [ManifestPath, string] => [at("display", "tabulator", "frozen_columns", i), c]),
    ...(spec.display.tabulator?.initial_sort ?? []).map((s, i): [ManifestPath, string] => [at("display", "tabulator", "initial_sort", i, "column"), s.column]),
  ];
  for (const [columnPath, column] of displayColumns) {
    if (column !== undefined && usable && !usable.has(column)) report(document, columnPath, `unknown column '${column}'`);
  }

  spec.filters.forEach((use, i) => {
    const source = context.widgetsById.get(use.filter_id);
    if (!source) {
      if (!context.invalidWidgetIds.has(use.filter_id)) report(document, at("filters", i, "filter_id"), `no widget has id '${use.filter_id}'`);
    }
    else if (source.manifest.spec.component !== "filter") report(document, at("filters", i, "filter_id"), `widget '${use.filter_id}' is a ${source.manifest.spec.component}, not a filter`);
  });
  spec.bindings.forEach((binding, i) => {
    if (spec.component !== "filter") report(document, at("bindings", i), "only filter widgets declare bindings");
    if (binding.target !== "*" && !context.widgetsById.has(binding.target) && !context.invalidWidgetIds.has(binding.target)) report(document, at("bindings", i, "target"), `no widget has id '${binding.target}'`);
  });
}

/** Checks the data block against its kind; returns the columns the widget can use, or null when unknown until run (sql). */
function checkData({ spec }: WidgetManifest, document: number, path: ManifestPath, context: WidgetContext, report: Report): Set<string> | null {
  const data = spec.data!;
  const at = (...rest: (string | number)[]) => [...path, "spec", "data", ...rest];
  const fieldsByKind = { dataset: "dataset", sql: "query", kpi: "kpi", static: "rows" } as const;
  for (const [kind, field] of Object.entries(fieldsByKind)) {
    if (data.kind !== kind && data[field] !== undefined) report(document, at(field), `data.${field} is only used with kind ${kind}`, { key: true });
  }
  // A dataset's or KPI's columns declare their formats where they are defined, so every widget of them reads the same.
  if ((data.kind === "dataset" || data.kind === "kpi") && data.formats !== undefined) {
    report(document, at("formats"), `data.formats is for kinds sql, static and demo; a ${data.kind}'s columns declare their format where they are defined`, { key: true });
  }
  switch (data.kind) {
    case "dataset": {
      if (data.dataset === undefined) return report(document, at("kind"), "kind dataset needs data.dataset"), new Set();
      if (context.uncheckedDatasetIds.has(data.dataset)) return null;
      const columns = context.datasetColumns.get(data.dataset);
      if (!columns) report(document, at("dataset"), `no dataset has id '${data.dataset}'; declared: ${[...context.datasetColumns.keys()].join(", ") || "none"}`);
      return columns ?? null;
    }
    case "sql":
      if (data.query === undefined) return report(document, at("kind"), "kind sql needs data.query"), null;
      checkSqlText(data.query, "query", context.sqlPolicy, (message, offset) => report(document, at("query"), message, { offset }));
      return null;
    case "kpi": {
      if (data.kpi === undefined) return report(document, at("kind"), "kind kpi needs data.kpi"), new Set();
      const kpi = KPI_CATALOG.get(data.kpi);
      if (!kpi) return report(document, at("kpi"), `unknown KPI '${data.kpi}'; the catalog has ${[...KPI_CATALOG.keys()].join(", ")}`), null;
      return new Set(kpiColumns(kpi));
    }
    case "static":
      if (data.rows === undefined) {
        if (spec.component !== "filter") report(document, at("kind"), "kind static needs data.rows");
        return new Set();
      }
      return new Set(data.rows.flatMap((row) => Object.keys(row)));
    case "demo":
      return new Set(SAMPLE_ORDER_COLUMNS);
  }
}
