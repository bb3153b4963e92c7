import { type DatasetSelection, asJsonRows, quote } from "./compile";
import { SqlParams, predicateSql } from "./filters";

/**
 * One scan per source and filter set (issue 31): the widgets of one dashboard request that read the
 * same source under the same WHERE conditions are answered by one statement, GROUP BY GROUPING SETS
 * over each widget's dimensions with the union of their `sql` metrics, instead of one scan each.
 * Every aggregate of a grouping set is computed over exactly the rows of its group, as a GROUP BY of
 * that set alone would, so sums, counts, distinct counts and ratios of aggregates stay exact; no
 * widget's answer is derived from another's. Each widget's order and row limit are kept per set by a
 * row_number() over its own ORDER BY, and a widget takes back only its set's rows, under its own ids.
 *
 * Selections that aggregate nothing (row listings) or filter on metrics (HAVING) are not shared:
 * they run as their own statement, as before.
 */

/** GROUPING() takes at most 31 arguments. */
const MAX_DIMENSIONS = 31;

/** Whether a selection may be answered from a shared grouped scan. */
export function shareable(selection: DatasetSelection): boolean {
  return selection.metrics.length > 0 && selection.having.length === 0;
}

/** Selections with the same key read the same rows: the same source under the same conditions (in any order). */
function scanKey(selection: DatasetSelection): string {
  const where = selection.where.map((w) => JSON.stringify([w.expression, w.predicate])).sort();
  return JSON.stringify([selection.source, where]);
}

/** Where one selection's rows are in a shared scan's result. */
interface Slice {
  /** Its grouping set, as GROUPING() over every dimension of the scan reports it. */
  grouping: number;
  /** The row_number column that orders its set its way. */
  rank: string;
  limit: number;
  /** Its column ids and the scan's columns holding them. */
  columns: [id: string, alias: string][];
}

export interface SharedScanStatement {
  text: string;
  values: unknown[];
  slices: Slice[];
}

/** Distinct dimension expressions over `selections`. */
function dimensionUnion(selections: readonly DatasetSelection[]): string[] {
  return [...new Set(selections.flatMap((s) => s.dimensions.map((d) => d.column)))];
}

/**
 * One statement answering every selection (all with the same scanKey, each shareable):
 *
 *   SELECT * FROM (
 *     SELECT <dimensions> AS "_d0"…, <metrics> AS "_m0"…, GROUPING(<dimensions>) AS "_g",
 *            row_number() OVER (PARTITION BY GROUPING(…) ORDER BY <a widget's order>) AS "_n0"…
 *     FROM <source> WHERE <conditions> GROUP BY GROUPING SETS ((…), (…), ())
 *   ) AS _quarry_scan
 *   WHERE ("_g" = $a AND "_n0" <= $limit) OR …
 *
 * A widget's order is its dataset's order then its own dimensions (ties in the dataset's order were
 * in no defined order before either), or its dimensions in the dataset's order.
 */
function compileSharedScan(selections: readonly DatasetSelection[]): SharedScanStatement {
  const params = new SqlParams();
  const where = selections[0].where.map(({ expression, predicate }) => predicateSql(expression, predicate, params));
  const dimensions = dimensionUnion(selections);
  if (dimensions.length > MAX_DIMENSIONS) throw new Error(`a shared scan groups at most ${MAX_DIMENSIONS} dimensions`);
  const dimensionAlias = new Map(dimensions.map((column, i) => [column, `_d${i}`]));
  const metrics = [...new Set(selections.flatMap((s) => s.metrics.map((m) => m.expression)))];
  const metricAlias = new Map(metrics.map((expression, i) => [expression, `_m${i}`]));
  const grouping = dimensions.length > 0 ? `GROUPING(${dimensions.join(", ")})` : "0";

  const sets = new Map<number, string>();
  const ranks = new Map<string, { alias: string; grouping: number; limit: number; window: string }>();
  const slices = selections.map((selection): Slice => {
    const mine = new Set(selection.dimensions.map((d) => d.column));
    // GROUPING(a, b, c) sets the bit of each argument not grouped in the row's set, the first argument highest.
    const bits = dimensions.reduce((acc, column, i) => (mine.has(column) ? acc : acc | (1 << (dimensions.length - 1 - i))), 0);
    sets.set(bits, `(${dimensions.filter((column) => mine.has(column)).join(", ")})`);
    const byDimensions = selection.dimensions.map((d) => ({ expression: d.column, dir: "asc" as const }));
    const order = selection.order.length > 0 ? [...selection.order, ...byDimensions.filter((d) => !selection.order.some((o) => o.expression === d.expression))] : byDimensions;
    const orderSql = order.map((o) => `${o.expression} ${o.dir.toUpperCase()}`).join(", ");
    const window = `PARTITION BY ${grouping}${orderSql ? ` ORDER BY ${orderSql}` : ""}`;
    const rankKey = `${bits}|${window}`;
    let rank = ranks.get(rankKey);
    if (!rank) ranks.set(rankKey, (rank = { alias: `_n${ranks.size}`, grouping: bits, limit: 0, window }));
    rank.limit = Math.max(rank.limit, selection.limit);
    return {
      grouping: bits,
      rank: rank.alias,
      limit: selection.limit,
      columns: [
        ...selection.dimensions.map((d): [string, string] => [d.id, dimensionAlias.get(d.column)!]),
        ...selection.metrics.map((m): [string, string] => [m.id, metricAlias.get(m.expression)!]),
      ],
    };
  });

  const select = [
    ...dimensions.map((column) => `${column} AS ${quote(dimensionAlias.get(column)!)}`),
    ...metrics.map((expression) => `${expression} AS ${quote(metricAlias.get(expression)!)}`),
    `${grouping} AS "_g"`,
    ...[...ranks.values()].map((r) => `row_number() OVER (${r.window}) AS ${quote(r.alias)}`),
  ];
  const scan =
    `SELECT ${select.join(", ")}\nFROM ${selections[0].source}` +
    (where.length > 0 ? `\nWHERE ${where.join(" AND ")}` : "") +
    (dimensions.length > 0 ? `\nGROUP BY GROUPING SETS (${[...sets.values()].join(", ")})` : "");
  const keep = [...ranks.values()].map((r) => `("_g" = ${params.add(r.grouping, "int")} AND ${quote(r.alias)} <= ${params.add(r.limit, "int")})`);
  const inner = `SELECT * FROM (\n${scan}\n) AS _quarry_scan\nWHERE ${keep.join(" OR ")}`;
  return { text: asJsonRows(inner), values: params.values, slices };
}

/** One selection's rows out of a shared scan's, in its order, under its own column ids. */
function sliceRows(rows: readonly Record<string, unknown>[], slice: Slice): Record<string, unknown>[] {
  return rows
    .filter((row) => row._g === slice.grouping && (row[slice.rank] as number) <= slice.limit)
    .sort((a, b) => (a[slice.rank] as number) - (b[slice.rank] as number))
    .map((row) => Object.fromEntries(slice.columns.map(([id, alias]) => [id, row[alias]])));
}

type Run = (text: string, values: readonly unknown[]) => Promise<Record<string, unknown>[]>;

interface Group {
  key: string;
  statement: SharedScanStatement;
  members: Map<string, number>;
  result?: Promise<Record<string, unknown>[]>;
  failed: boolean;
}

/**
 * The shared scans of one request: built from every widget's selection before any runs; the first
 * widget of a group to ask runs its statement, the others take their slices of the same rows. When
 * the shared statement fails (one widget's bad metric, a time limit), each widget of the group runs
 * alone, so each sees its own answer or its own error, as without sharing.
 */
export class SharedScans {
  private readonly byWidget = new Map<string, Group>();

  /** `selections`: the selection of each widget that reads a SQL dataset, by widget id. */
  constructor(selections: ReadonlyMap<string, DatasetSelection>) {
    const byKey = new Map<string, [string, DatasetSelection][]>();
    for (const [widgetId, selection] of selections) {
      if (!shareable(selection)) continue;
      const key = scanKey(selection);
      byKey.set(key, [...(byKey.get(key) ?? []), [widgetId, selection]]);
    }
    for (const [key, members] of byKey) {
      // One widget alone keeps its own statement; past GROUPING()'s arguments, so do they all.
      if (members.length < 2 || dimensionUnion(members.map(([, s]) => s)).length > MAX_DIMENSIONS) continue;
      const group: Group = { key, statement: compileSharedScan(members.map(([, s]) => s)), members: new Map(members.map(([id], i) => [id, i])), failed: false };
      for (const [id] of members) this.byWidget.set(id, group);
    }
  }

  /** The statements that answer the shared widgets (tests and benches time them). */
  get statements(): SharedScanStatement[] {
    return [...new Set(this.byWidget.values())].map((g) => g.statement);
  }

  /** Whether `widgetId` is answered from a shared statement. */
  shares(widgetId: string): boolean {
    return this.byWidget.has(widgetId);
  }

  /**
   * The rows of `widgetId`'s selection from its group's scan (run with `run` if no widget of the
   * group ran it yet), or undefined when it is not shared or its group's statement failed: the widget
   * then runs its own. An error `passThrough` accepts (the runner's transaction is spent) is thrown
   * and the group may run again for the next caller.
   */
  async rows(widgetId: string, selection: DatasetSelection, run: Run, passThrough: (error: unknown) => boolean): Promise<Record<string, unknown>[] | undefined> {
    const group = this.byWidget.get(widgetId);
    // The request's run passes the very selection its plan gave the scans; a caller that planned the widget again
    // (or under other rollups) and reads other rows than the group's runs its own statement instead.
    if (!group || group.failed || scanKey(selection) !== group.key) return undefined;
    group.result ??= run(group.statement.text, group.statement.values);
    try {
      return sliceRows(await group.result, group.statement.slices[group.members.get(widgetId)!]);
    } catch (error) {
      if (passThrough(error)) {
        group.result = undefined;
        throw error;
      }
      group.failed = true;
      return undefined;
    }
  }
}
