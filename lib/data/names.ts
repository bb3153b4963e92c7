import { READER_TABLES } from "@/lib/db/warehouse";
import { RESERVED_COLUMN_NAMES } from "./formats/identifiers";

/**
 * The names an organization's tables and their columns may have (docs/data.md "Names"): lower-case
 * identifiers PostgreSQL reads unquoted, within its 63 bytes. A table never takes a warehouse
 * table's name (a dataset's `from: orders` always means the warehouse); a column never takes
 * `org_id`, which every table carries for row-level security, nor a system column's name
 * (RESERVED_COLUMN_NAMES, the rule columnIdentifier renames headers by).
 */
export const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** Why `name` cannot name a table, or null when it can. */
export function tableNameProblem(name: string): string | null {
  if (!IDENTIFIER.test(name)) return `"${name}" is not a table name: use lower-case letters, digits and underscores, starting with a letter or underscore, at most 63 characters`;
  if (Object.hasOwn(READER_TABLES, name)) return `"${name}" is a warehouse table's name; choose another`;
  if (name.startsWith("pg_")) return `"${name}": names starting with pg_ are PostgreSQL's own`;
  return null;
}

/** Why `name` cannot name a column, or null when it can. */
export function columnNameProblem(name: string): string | null {
  if (!IDENTIFIER.test(name)) return `"${name}" is not a column name: use lower-case letters, digits and underscores, starting with a letter or underscore, at most 63 characters`;
  if (RESERVED_COLUMN_NAMES.has(name)) return `"${name}" is reserved (${name === "org_id" ? "every table carries it for its organization" : "a PostgreSQL system column"}); rename this column`;
  return null;
}
