import { READER_TABLES } from "@/lib/db/warehouse";
import { type SqlToken, SqlTextError, lex } from "@/lib/query/sql-text";
import type { SqlPolicy } from "./references";

/*
 * The editor's name check and completion over the tables a manifest's SQL may read: the warehouse and
 * the organization's own tables (issue 42). It runs in the browser on the lexer, so it reports only what
 * it can prove wrong (a table no catalog entry and no CTE names, a column its table does not have) and
 * stays silent where it cannot place a name (subqueries, CTE columns, functions). The server decides on
 * PostgreSQL's parser (lib/query/sql-allow-list.ts) when a draft is saved and when `plan` runs.
 */

export interface CatalogColumn {
  name: string;
  /** The column's type where it is known (an organization's tables); absent for the warehouse. */
  type?: string;
}

export interface CatalogTable {
  name: string;
  columns: readonly CatalogColumn[];
  /** An organization's own table (loaded on /data), as opposed to the warehouse. */
  own: boolean;
}

/** Tables by name (names as PostgreSQL stores them: unquoted names fold to lower case). */
export type TableCatalog = ReadonlyMap<string, CatalogTable>;

/** The warehouse's tables, the part of every catalog that is the same for all organizations. */
export const WAREHOUSE_CATALOG: readonly CatalogTable[] = Object.entries(READER_TABLES).map(([name, table]) => ({
  name,
  columns: table.columns.map((column) => ({ name: column })),
  own: false,
}));

/** The catalog of an organization: the warehouse and its own tables (an own table never shadows the warehouse's). */
export function tableCatalog(ownTables: readonly CatalogTable[]): TableCatalog {
  const catalog = new Map<string, CatalogTable>();
  for (const table of [...WAREHOUSE_CATALOG, ...ownTables]) if (!catalog.has(table.name)) catalog.set(table.name, table);
  return catalog;
}

/** Words after which a FROM item's alias cannot stand: they begin the next part of the statement. */
const CLAUSE_WORDS = new Set(
  "on using where group order having limit offset fetch window union intersect except join inner left right full cross natural lateral for select from returning tablesample as with"
    .split(" "),
);

/** Words that end a FROM list at the same depth (a comma after them separates something else). */
const FROM_ENDS = new Set("where group order having limit offset fetch window union intersect except select on using returning".split(" "));

function nameOf(token: SqlToken | undefined): string | null {
  if (!token) return null;
  if (token.kind === "word") return token.text.toLowerCase();
  if (token.kind === "quoted") return token.text;
  return null;
}

const isPunct = (token: SqlToken | undefined, text: string) => token?.kind === "punct" && token.text === text;
const isWord = (token: SqlToken | undefined, text: string) => token?.kind === "word" && token.text.toLowerCase() === text;

interface Scope {
  /** Qualifiers (aliases and table names) that stand for a catalog table. */
  qualifiers: Map<string, CatalogTable>;
  /** Relations named after FROM/JOIN that are neither in the catalog nor a CTE, with their offsets. */
  unknown: { name: string; at: number }[];
}

/**
 * The relations `tokens` read: every FROM item (after FROM, JOIN, or a comma in a FROM list) that is a
 * plain or `public.`-qualified name, with its alias. Names followed by `(` are functions, skipped.
 */
function scopeOf(tokens: readonly SqlToken[], catalog: TableCatalog): Scope {
  // CTE names: `name AS (` and `name (a, b) AS (`.
  const ctes = new Set<string>();
  tokens.forEach((t, i) => {
    const name = nameOf(t);
    if (name === null) return;
    if (isWord(tokens[i + 1], "as") && isPunct(tokens[i + 2], "(")) ctes.add(name);
    if (isPunct(tokens[i + 1], "(") && isWord(tokens[i - 1], "with")) ctes.add(name);
    if (isPunct(tokens[i + 1], "(") && isPunct(tokens[i - 1], ",")) {
      // `, name (cols) AS (` inside a WITH list: find the closing paren, then AS (.
      let depth = 0;
      for (let j = i + 1; j < tokens.length; j++) {
        if (isPunct(tokens[j], "(")) depth++;
        else if (isPunct(tokens[j], ")") && --depth === 0) {
          if (isWord(tokens[j + 1], "as") && isPunct(tokens[j + 2], "(")) ctes.add(name);
          break;
        }
      }
    }
  });

  const scope: Scope = { qualifiers: new Map(), unknown: [] };
  // Whether a FROM list is open, per parenthesis depth.
  const inFrom: boolean[] = [false];
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (isPunct(t, "(")) {
      inFrom[++depth] = false;
      continue;
    }
    if (isPunct(t, ")")) {
      depth = Math.max(0, depth - 1);
      continue;
    }
    const word = t.kind === "word" ? t.text.toLowerCase() : null;
    if (word === "from") inFrom[depth] = true;
    else if (word !== null && FROM_ENDS.has(word)) inFrom[depth] = false;
    const startsItem = word === "from" || word === "join" || (isPunct(t, ",") && inFrom[depth]);
    if (!startsItem) continue;

    let j = i + 1;
    if (isWord(tokens[j], "lateral") || isWord(tokens[j], "only")) j++;
    let name = nameOf(tokens[j]);
    if (name === null) continue; // a subquery, a VALUES list
    const at = tokens[j].at;
    if (isPunct(tokens[j + 1], ".")) {
      // schema.table: only `public` holds tables a manifest may read; anything else is left to the server.
      if (name !== "public") continue;
      j += 2;
      name = nameOf(tokens[j]);
      if (name === null) continue;
    }
    if (isPunct(tokens[j + 1], "(") || isPunct(tokens[j + 1], ".")) continue; // a function, or a name we cannot place
    const table = catalog.get(name);
    if (!table) {
      if (!ctes.has(name)) scope.unknown.push({ name, at });
      continue;
    }
    let aliasAt = j + 1;
    if (isWord(tokens[aliasAt], "as")) aliasAt++;
    const alias = nameOf(tokens[aliasAt]);
    const aliasIsWord = alias !== null && !(tokens[aliasAt].kind === "word" && CLAUSE_WORDS.has(alias));
    if (aliasIsWord) scope.qualifiers.set(alias, table);
    // A table with an alias is referred to by the alias only (PostgreSQL: "invalid reference to FROM-clause entry").
    else scope.qualifiers.set(name, table);
  }
  return scope;
}

function columnList(table: CatalogTable): string {
  return table.columns.map((c) => c.name).join(", ");
}

/**
 * The first name in `text` that cannot resolve against `catalog`, as a SqlTextError at its offset; null when
 * every name it can place resolves. `scopeText` is where the relations come from (the dataset's source,
 * for an expression); `text` itself for a query or a source.
 */
export function catalogNameProblem(text: string, catalog: TableCatalog, scopeText: string = text): SqlTextError | null {
  let tokens: SqlToken[];
  let scopeTokens: SqlToken[];
  try {
    tokens = lex(text);
    scopeTokens = scopeText === text ? tokens : lex(scopeText);
  } catch {
    return null; // the lexical checks report it
  }
  const scope = scopeOf(scopeTokens, catalog);
  const problems: SqlTextError[] = [];
  if (scopeText === text) {
    for (const unknown of scope.unknown) {
      const own = [...catalog.values()].filter((t) => t.own).map((t) => t.name);
      problems.push(new SqlTextError(`unknown table '${unknown.name}'; ${own.length > 0 ? `your organization's tables: ${own.join(", ")}; ` : ""}the warehouse has ${WAREHOUSE_CATALOG.map((t) => t.name).join(", ")}`, unknown.at));
    }
  }
  tokens.forEach((t, i) => {
    const qualifier = nameOf(t);
    if (qualifier === null || !isPunct(tokens[i + 1], ".") || isPunct(tokens[i - 1], ".")) return;
    const columnToken = tokens[i + 2];
    const column = nameOf(columnToken);
    if (column === null || isPunct(tokens[i + 3], ".") || isPunct(tokens[i + 3], "(")) return;
    const table = scope.qualifiers.get(qualifier);
    if (!table || table.columns.some((c) => c.name === column)) return;
    problems.push(new SqlTextError(`table '${table.name}' has no column '${column}'; its columns: ${columnList(table)}`, columnToken.at));
  });
  problems.sort((a, b) => a.position - b.position);
  return problems[0] ?? null;
}

/** The browser's SqlPolicy: every name the lexer can place resolves against the organization's catalog. */
export function catalogSqlPolicy(catalog: TableCatalog): SqlPolicy {
  // A source is a FROM list without its FROM: checked as the statement it is spliced into, offsets shifted back.
  const FROM_PREFIX = "SELECT 1 FROM ";
  return {
    query: (text) => {
      const problem = catalogNameProblem(text, catalog);
      if (problem) throw problem;
    },
    source: (text) => {
      const problem = catalogNameProblem(`${FROM_PREFIX}${text}`, catalog);
      if (problem) throw new SqlTextError(problem.message, Math.max(0, problem.position - FROM_PREFIX.length));
    },
    expression: (text, source) => {
      const problem = source === undefined ? null : catalogNameProblem(text, catalog, `${FROM_PREFIX}${source}`);
      if (problem) throw problem;
    },
  };
}

export interface NameCompletion {
  label: string;
  /** "table" or "column". */
  kind: "table" | "column";
  detail: string;
}

/**
 * What may complete the name being typed at the end of `before` (the text of the line up to the cursor):
 * after `qualifier.` the columns of the table it stands for (a table name, or an alias the line's FROM
 * items give it); after FROM, JOIN or `from:` (anywhere when `explicit`, Ctrl-Space) the catalog's tables.
 * `from` is the offset in `before` where the completed word starts. Null when nothing fits there.
 */
export function nameCompletions(before: string, catalog: TableCatalog, context: string = before, explicit = false): { from: number; options: NameCompletion[] } | null {
  const match = /(?:([A-Za-z_][A-Za-z0-9_$]*)\.)?([A-Za-z_][A-Za-z0-9_$]*)?$/.exec(before);
  if (!match) return null;
  const from = before.length - (match[2]?.length ?? 0);
  if (match[1] !== undefined) {
    const qualifier = match[1].toLowerCase();
    let scope: Scope | null = null;
    try {
      scope = scopeOf(lex(context), catalog);
    } catch {
      scope = null;
    }
    const table = scope?.qualifiers.get(qualifier) ?? catalog.get(qualifier);
    if (!table) return null;
    return { from, options: table.columns.map((c) => ({ label: c.name, kind: "column", detail: c.type ? `${table.name} · ${c.type}` : table.name })) };
  }
  // Table names where a table goes (after FROM, JOIN or a dataset's `from:`), or anywhere when asked for.
  if (!explicit && !/(?:\bfrom\s*:?|\bjoin)\s+[A-Za-z0-9_$]*$/i.test(before)) return null;
  return {
    from,
    options: [...catalog.values()].map((t) => ({ label: t.name, kind: "table", detail: t.own ? `your table · ${t.columns.length} columns` : "warehouse" })),
  };
}
