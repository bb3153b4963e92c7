import { columnNameProblem, tableNameProblem } from "@/lib/data/names";
import type { ColumnType } from "@/lib/data/formats/infer";
import { columnIdentifier } from "@/lib/data/formats/identifiers";

/*
 * The upload form's column plan, framework-free so its rules are tested on their own: each source
 * column kept or left out, its table name and type, checked before the load is sent with the names'
 * own rule (lib/data/names.ts), which the server applies again.
 */

export const LOAD_MODES = ["create", "append", "replace", "upsert"] as const;
export type LoadModeChoice = (typeof LOAD_MODES)[number];

export const MODE_HELP: Record<LoadModeChoice, string> = {
  create: "A new table with these columns and rows.",
  append: "Adds these rows to the table's rows.",
  replace: "Replaces every row in one step: readers see the old rows or the new ones, never half.",
  upsert: "Updates rows whose key columns match and adds the others.",
};

export interface PlannedColumn {
  /** The source column's index in the file. */
  from: number;
  /** The file's header, as read. */
  header: string;
  name: string;
  type: ColumnType;
  include: boolean;
}

export interface ExistingTable {
  name: string;
  columns: readonly { name: string; type: ColumnType }[];
  key_columns?: readonly string[];
}

/** Problems of each kept column, by index in `columns` (only the columns that have one). */
export function columnProblems(columns: readonly PlannedColumn[]): Map<number, string> {
  const problems = new Map<number, string>();
  const seen = new Map<string, number>();
  columns.forEach((column, index) => {
    if (!column.include) return;
    const problem = columnNameProblem(column.name);
    if (problem) problems.set(index, problem);
    else if (seen.has(column.name)) problems.set(index, `Also the name of column ${seen.get(column.name)! + 1}`);
    if (!seen.has(column.name)) seen.set(column.name, index);
  });
  return problems;
}

/** Why the plan cannot be loaded as it stands, or null. */
export function planProblem(plan: { table: string; mode: LoadModeChoice; columns: readonly PlannedColumn[]; keyColumns: readonly string[]; existing: ExistingTable | null }): string | null {
  const tableProblem = tableNameProblem(plan.table);
  if (tableProblem) return tableProblem;
  const kept = plan.columns.filter((c) => c.include);
  if (kept.length === 0) return "Keep at least one column";
  if (columnProblems(plan.columns).size > 0) return "Fix the column names marked above";
  if (plan.mode === "create" && plan.existing) return `A table named “${plan.table}” exists: choose append, replace or upsert, or another name`;
  if (plan.mode !== "create" && !plan.existing) return `There is no table named “${plan.table}” to ${plan.mode}; create it first`;
  if (plan.mode === "upsert") {
    if (plan.keyColumns.length === 0) return "Choose the key columns that identify a row";
    const missing = plan.keyColumns.filter((k) => !kept.some((c) => c.name === k));
    if (missing.length > 0) return `Key column ${missing.join(", ")} is not among the loaded columns`;
  }
  return null;
}

/** The plan's columns the load sends (kept ones only). */
export function loadColumns(columns: readonly PlannedColumn[]): { name: string; type: ColumnType; from: number }[] {
  return columns.filter((c) => c.include).map((c) => ({ name: c.name, type: c.type, from: c.from }));
}

/**
 * For a load into an existing table: each column named like one of the table's takes the table's
 * type (a different type would rebuild the table on replace, and fail on append).
 */
export function alignWithTable(columns: readonly PlannedColumn[], table: ExistingTable | null): PlannedColumn[] {
  if (!table) return [...columns];
  const types = new Map(table.columns.map((c) => [c.name, c.type]));
  return columns.map((c) => (types.has(c.name) ? { ...c, type: types.get(c.name)! } : c));
}

/** The table name a file suggests: its name without the extension, made an identifier as headers are. */
export function tableNameFromFile(fileName: string): string {
  return columnIdentifier(fileName.replace(/\.[^.]*$/, ""));
}
