import { loadModule, parseSync } from "libpg-query";
import { READER_TABLES } from "@/lib/db/warehouse";

/*
 * What SQL written in a manifest may do, decided on PostgreSQL's own parser (libpg-query: the
 * server's grammar compiled to WebAssembly), never on a lexer or a list of forbidden names.
 * A statement is accepted only when every node of its parse tree is of a kind listed here, every
 * function, operator, type and relation it names is listed here, and every column reference
 * resolves, as PostgreSQL resolves it, to a column (or the whole row) of a relation in scope,
 * compared after the parser has decoded quoting and U& escapes. Anything else (a function that
 * runs SQL text, touches the server or sleeps, a table outside the warehouse, a data-modifying
 * CTE, SELECT INTO, a locking clause, a cast to regclass) is refused, naming what was found.
 *
 * Names are resolved because PostgreSQL reads `x.f` and `(expr).f` as the call `f(x)` whenever
 * `f` is not a column of `x` (functional notation): a call the function list never sees. So a
 * qualified reference must name a column of a relation in scope, and field selection on an
 * expression is refused outright; what the resolver cannot place is refused, never guessed.
 *
 * This is one of two walls: user SQL also runs on a login that can read only the warehouse under
 * row-level security (lib/db/reader-login.ts, docs/security.md).
 */

await loadModule();

/**
 * The tables user SQL may read (schema `public`): the demo warehouse, and the rollups the engine
 * builds from it (lib/rollups: statements routed to a rollup read rollup_rows, under the same
 * row-level security; they hold only aggregates of the warehouse rows the reader sees anyway).
 */
export const ALLOWED_COLUMNS: ReadonlyMap<string, readonly string[]> = new Map(Object.entries(READER_TABLES).map(([name, table]) => [name, table.columns]));

/** The relations of ALLOWED_COLUMNS (lib/db/warehouse.test.ts holds them and their columns to the database's). */
export const ALLOWED_RELATIONS: ReadonlySet<string> = new Set(ALLOWED_COLUMNS.keys());

/**
 * Functions by name (schema `pg_catalog` or unqualified). Aggregates, window functions,
 * arithmetic, text, date and time, JSON building, arrays, conditional helpers; nothing that
 * executes SQL text, reads server state or files, sleeps, locks, or builds very large values
 * from a small input (repeat, lpad, rpad and format's field width could ask for a gigabyte from
 * one row; replace and regexp_replace are bounded by REPLACEMENT_GROWTH_MAX).
 */
export const ALLOWED_FUNCTIONS: ReadonlySet<string> = new Set(
  [
    // aggregates
    "count sum avg min max stddev stddev_pop stddev_samp variance var_pop var_samp bool_and bool_or every string_agg array_agg",
    "percentile_cont percentile_disc mode corr covar_pop covar_samp regr_slope regr_intercept regr_r2 regr_count regr_avgx regr_avgy",
    "regr_sxx regr_syy regr_sxy json_agg jsonb_agg json_object_agg jsonb_object_agg bit_and bit_or",
    // window
    "row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value",
    // arithmetic
    "abs ceil ceiling floor round trunc sign sqrt cbrt power pow exp ln log log10 mod div pi degrees radians width_bucket gcd lcm scale",
    "sin cos tan asin acos atan atan2 float4 float8 int2 int4 int8 numeric",
    // text
    "length char_length character_length octet_length bit_length lower upper initcap btrim ltrim rtrim substring substr position strpos",
    "replace concat concat_ws left right split_part reverse to_char to_number regexp_replace regexp_match regexp_like regexp_count",
    "regexp_substr regexp_split_to_array starts_with md5 translate ascii chr string_to_array array_to_string overlay",
    "normalize text similar_to_escape like_escape",
    // date and time
    "now current_date date_trunc date_part extract age make_date make_time make_timestamp make_timestamptz make_interval to_date",
    "to_timestamp date_bin justify_days justify_hours justify_interval isfinite timezone statement_timestamp transaction_timestamp",
    "clock_timestamp date",
    // conditional, arrays, JSON, rows
    "generate_series unnest array_length cardinality array_position array_positions array_remove array_append array_prepend",
    "array_cat array_lower array_upper json_build_object jsonb_build_object json_build_array jsonb_build_array to_json to_jsonb",
    "row_to_json json_extract_path_text jsonb_extract_path_text json_array_length jsonb_array_length jsonb_typeof json_typeof",
    // the type of a value (the rollup build learns its expressions' types with it)
    "pg_typeof",
  ]
    .join(" ")
    .split(" "),
);

/** Operators by symbol (schema `pg_catalog` or unqualified): comparison, arithmetic, pattern matching, JSON and array access. */
export const ALLOWED_OPERATORS: ReadonlySet<string> = new Set(
  "= <> < > <= >= + - * / % ^ || ~~ ~~* !~~ !~~* ~ ~* !~ !~* @ |/ ||/ & | # << >> -> ->> #> #>> @> <@ ? ?| ?& &&".split(" "),
);

/** Types a value may be cast to (the parser's internal names: `integer` is int4, `boolean` is bool). */
export const ALLOWED_TYPES: ReadonlySet<string> = new Set(
  "int2 int4 int8 numeric float4 float8 text varchar bpchar bool date time timetz timestamp timestamptz interval json jsonb uuid".split(" "),
);

/** Date and time keywords (CURRENT_DATE…); CURRENT_USER and its kin say nothing a dashboard needs. */
const ALLOWED_VALUE_FUNCTIONS: ReadonlySet<string> = new Set(
  ["CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIME_N", "CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP_N", "LOCALTIME", "LOCALTIME_N", "LOCALTIMESTAMP", "LOCALTIMESTAMP_N"].map((op) => `SVFOP_${op}`),
);

/**
 * How much longer one replace() or regexp_replace() may make its text, multiplied along nested
 * calls: the replacement (and replace's pattern) must be literals, so each call's growth is
 * known before anything runs. `replace(replace(x, 'a', 'aaaa…'), 'a', 'aaaa…')` would otherwise
 * build a gigabyte from one short row.
 */
export const REPLACEMENT_GROWTH_MAX = 1_000;

/** Parse-tree nodes that only hold other nodes or plain values; each is walked through in the scope it appears in. */
const PLAIN_NODES: ReadonlySet<string> = new Set([
  "ResTarget",
  "A_Star",
  "A_Const",
  "String",
  "Integer",
  "Float",
  "Boolean",
  "List",
  "BoolExpr",
  "Alias",
  "CaseExpr",
  "CaseWhen",
  "CoalesceExpr",
  "MinMaxExpr",
  "NullTest",
  "BooleanTest",
  "SortBy",
  "WindowDef",
  "GroupingSet",
  "GroupingFunc",
  "A_ArrayExpr",
  "A_Indices",
  "RowExpr",
  "CollateClause",
  "NamedArgExpr",
]);

/** SelectStmt fields that hold no expressions (flags and enums). */
const SELECT_FLAGS: ReadonlySet<string> = new Set(["op", "all", "limitOption", "groupDistinct"]);

export class SqlNotAllowed extends Error {
  constructor(
    message: string,
    /** Offset into the checked text, when the parser knows it. */
    readonly position: number,
    /**
     * PostgreSQL's own words for the same refusal, when the statement could not have run anyway
     * (`column q.x does not exist`): callers that react to the server's message see the same one.
     */
    readonly sqlMessage?: string,
  ) {
    super(message);
    this.name = "SqlNotAllowed";
  }
}

/** A name that resolves to nothing: the statement could not run on the server either, which says `sqlMessage`. */
export class SqlUnknownName extends SqlNotAllowed {
  constructor(message: string, position: number, sqlMessage: string) {
    super(message, position, sqlMessage);
    this.name = "SqlUnknownName";
  }
}

export interface AllowListOptions {
  /** Bind parameters ($1…) are ours: allowed in statements Quarry compiled, never in text a user wrote. */
  allowParams?: boolean;
  /**
   * The organization's own tables (lib/db/own-tables.ts), named unqualified: they resolve from
   * its own schema (withTenant's reader search_path). Another organization's table is never in the
   * map, so naming it is refused exactly as any unknown name is.
   */
  ownTables?: ReadonlyMap<string, readonly string[]>;
}

type Node = Record<string, unknown>;

/**
 * Checks one statement: exactly one SELECT (WITH, VALUES and set operations included), every
 * part of it on the allow-lists, every column reference resolved. Throws SqlNotAllowed naming the
 * first thing refused.
 */
export function checkStatement(sql: string, options: AllowListOptions = {}): void {
  let tree: { stmts?: { stmt: Node }[] };
  try {
    tree = parseSync(sql);
  } catch (error) {
    const position = (error as { sqlDetails?: { cursorPosition?: number } }).sqlDetails?.cursorPosition ?? 0;
    throw new SqlNotAllowed(`SQL error: ${(error as Error).message}`, position);
  }
  const statements = tree.stmts ?? [];
  if (statements.length !== 1) throw new SqlNotAllowed(statements.length === 0 ? "the query is empty" : "only one SQL statement is allowed", 0);
  const [kind] = Object.keys(statements[0].stmt);
  if (kind !== "SelectStmt") throw new SqlNotAllowed(`only read queries are allowed (SELECT or WITH), not ${kind.replace(/Stmt$/, "").toUpperCase()}`, 0);
  new Walker(options).select(statements[0].stmt.SelectStmt as Node, null);
}

/** Checks an expression spliced into a generated SELECT list over `source` (a dimension column, a `sql` metric). */
export function checkExpression(expression: string, source?: string, options: AllowListOptions = {}): void {
  const prefix = "SELECT ";
  shifted(prefix.length, () => checkStatement(`${prefix}${expression}${source !== undefined ? `\nFROM ${source}` : ""}`, options));
}

/** Checks a `from` source spliced into a generated statement (a table, a join, a subquery). */
export function checkSource(source: string, options: AllowListOptions = {}): void {
  const prefix = "SELECT 1 FROM ";
  shifted(prefix.length, () => checkStatement(`${prefix}${source}`, options));
}

function shifted(by: number, check: () => void): void {
  try {
    check();
  } catch (error) {
    if (error instanceof SqlUnknownName) throw new SqlUnknownName(error.message, Math.max(0, error.position - by), error.sqlMessage!);
    if (error instanceof SqlNotAllowed) throw new SqlNotAllowed(error.message, Math.max(0, error.position - by), error.sqlMessage);
    throw error;
  }
}

const names = (list: unknown): string[] => ((list as Node[] | undefined) ?? []).map((item) => String((item.String as { sval?: string } | undefined)?.sval ?? ""));
const location = (node: Node): number => (typeof node.location === "number" ? node.location : 0);
/** The one `{Kind: fields}` entry of a wrapped node. */
const unwrap = (wrapped: unknown): [string, Node] => {
  const [entry] = Object.entries((wrapped ?? {}) as Node);
  return entry ? [entry[0], entry[1] as Node] : ["", {}];
};

/** A relation in a FROM clause, as a column reference may name it. */
interface Relation {
  /** Its alias, else its table or function name; null for a subquery without an alias. */
  name: string | null;
  columns: ReadonlySet<string>;
}

/**
 * What names a part of a statement can see: the relations of its FROM clause and its WITH
 * names, then those of the statements around it (correlated subqueries), as in PostgreSQL.
 */
class Scope {
  readonly relations: Relation[] = [];
  /** Output names of the SELECT, which ORDER BY and GROUP BY may name; set while those are walked. */
  outputs: ReadonlySet<string> | null = null;
  constructor(
    readonly parent: Scope | null,
    readonly ctes: ReadonlyMap<string, readonly string[]> = new Map(),
  ) {}

  cte(name: string): readonly string[] | undefined {
    return this.ctes.get(name) ?? this.parent?.cte(name);
  }

  relation(name: string): Relation | undefined {
    return this.relations.find((r) => r.name === name) ?? this.parent?.relation(name);
  }

  hasColumn(name: string): boolean {
    return this.relations.some((r) => r.columns.has(name) || r.name === name) || (this.outputs?.has(name) ?? false) || (this.parent?.hasColumn(name) ?? false);
  }
}

/** A column list renamed by an alias's column names (`AS t(a, b)` renames the first two). */
function renamed(columns: readonly string[], alias: Node | undefined): string[] {
  const given = names(alias?.colnames);
  return columns.map((column, i) => given[i] ?? column).concat(given.slice(columns.length));
}

class Walker {
  /** Growth of the replace() calls around the one being walked (REPLACEMENT_GROWTH_MAX). */
  private growth = 1;

  constructor(private readonly options: AllowListOptions) {}

  /** Walks any value in `scope`: arrays, node wrappers `{Kind: {...}}`, and plain fields. */
  value(value: unknown, scope: Scope): void {
    if (Array.isArray(value)) {
      for (const item of value) this.value(item, scope);
      return;
    }
    if (typeof value !== "object" || value === null) return;
    for (const [key, child] of Object.entries(value)) {
      if (/^[A-Z]/.test(key)) this.node(key, child as Node, scope);
      else this.value(child, scope);
    }
  }

  node(kind: string, node: Node, scope: Scope): void {
    switch (kind) {
      case "SelectStmt":
        this.select(node, scope);
        return;
      case "ColumnRef":
        return this.columnRef(node, scope);
      case "A_Indirection":
        for (const step of (node.indirection as Node[] | undefined) ?? []) {
          const [stepKind] = unwrap(step);
          if (stepKind !== "A_Indices") throw new SqlNotAllowed("field selection on an expression ((expr).name) is not allowed in dashboard SQL: PostgreSQL may read it as a function call; name a column as table.column", location(node));
        }
        return this.value(node, scope);
      case "FuncCall":
        return this.call(node, scope);
      case "A_Expr":
        return this.operator(node, scope);
      case "SubLink":
        if (node.operName) this.operatorName(names(node.operName), location(node));
        return this.value(node, scope);
      case "TypeCast":
        this.type(node.typeName as Node);
        return this.value({ arg: node.arg }, scope);
      case "SQLValueFunction":
        if (!ALLOWED_VALUE_FUNCTIONS.has(String(node.op))) throw new SqlNotAllowed(`${String(node.op).replace(/^SVFOP_/, "")} is not allowed in dashboard SQL`, location(node));
        return;
      case "ParamRef":
        if (!this.options.allowParams) throw new SqlNotAllowed("bind parameters are not allowed; use filters", location(node));
        return;
      default:
        if (!PLAIN_NODES.has(kind)) throw new SqlNotAllowed(`${describeNode(kind)} is not allowed in dashboard SQL`, location(node));
        return this.value(node, scope);
    }
  }

  /** Checks a SELECT (or set operation, or VALUES) seen from `outer`; answers the names of its output columns. */
  select(node: Node, outer: Scope | null): string[] {
    if (node.intoClause) throw new SqlNotAllowed("SELECT INTO is not allowed: dashboard SQL only reads", 0);
    if ((node.lockingClause as unknown[] | undefined)?.length) throw new SqlNotAllowed("FOR UPDATE/SHARE is not allowed: dashboard SQL only reads", 0);
    const named = this.withClause(node.withClause, outer);
    const scope = new Scope(named);
    let outputs: string[];
    if (node.op !== undefined && node.op !== "SETOP_NONE") {
      // The branches of UNION/INTERSECT/EXCEPT are SELECTs written without their node wrapper; the first names the columns.
      outputs = this.select(node.larg as Node, named);
      this.select(node.rarg as Node, named);
      scope.relations.push({ name: null, columns: new Set(outputs) });
    } else if (node.valuesLists) {
      this.value(node.valuesLists, scope);
      const first = unwrap((node.valuesLists as unknown[])[0])[1].items as unknown[] | undefined;
      outputs = (first ?? []).map((_, i) => `column${i + 1}`);
    } else {
      for (const item of (node.fromClause as unknown[] | undefined) ?? []) this.fromItem(item, scope, named);
      outputs = this.targets(node.targetList as unknown[] | undefined, scope);
    }
    for (const [field, content] of Object.entries(node)) {
      if (["withClause", "larg", "rarg", "valuesLists", "fromClause", "targetList", "intoClause", "lockingClause"].includes(field) || SELECT_FLAGS.has(field)) continue;
      if (field === "sortClause" || field === "groupClause") {
        // ORDER BY and GROUP BY may name output columns as well as input ones.
        scope.outputs = new Set(outputs);
        this.value(content, scope);
        scope.outputs = null;
      } else if (["whereClause", "havingClause", "windowClause", "distinctClause", "limitOffset", "limitCount"].includes(field)) {
        this.value(content, scope);
      } else {
        throw new SqlNotAllowed(`the SQL clause ${field} is not allowed in dashboard SQL`, 0);
      }
    }
    return outputs;
  }

  /** The WITH names of a SELECT, each body checked where it may look; a scope holding them. */
  private withClause(withClause: unknown, outer: Scope | null): Scope | null {
    const clause = (withClause && typeof withClause === "object" && "WithClause" in withClause ? (withClause as Node).WithClause : withClause) as Node | undefined;
    if (!clause) return outer;
    const ctes = new Map<string, readonly string[]>();
    const visible = new Scope(outer, ctes);
    for (const wrapped of clause.ctes as { CommonTableExpr: Node }[]) {
      const cte = wrapped.CommonTableExpr;
      const name = String(cte.ctename);
      const [bodyKind, body] = unwrap(cte.ctequery);
      if (bodyKind !== "SelectStmt") throw new SqlNotAllowed(`WITH ${name} may only read (SELECT), not ${bodyKind.replace(/Stmt$/, "").toUpperCase()}`, location(cte));
      if (cte.search_clause || cte.cycle_clause) throw new SqlNotAllowed("SEARCH and CYCLE clauses are not allowed in dashboard SQL", location(cte));
      const aliased = names(cte.aliascolnames);
      if (clause.recursive) {
        // A recursive body sees its own name: its columns are the first branch's (which cannot see it), renamed.
        const first = body.op !== undefined && body.op !== "SETOP_NONE" ? (body.larg as Node) : body;
        ctes.set(name, renamed(this.select(first, visible), { colnames: cte.aliascolnames }));
        this.select(body, visible);
      } else {
        const columns = this.select(body, visible);
        ctes.set(name, aliased.length > 0 ? renamed(columns, { colnames: cte.aliascolnames }) : columns);
      }
    }
    return visible;
  }

  /** The output names of a target list, as PostgreSQL names them; `*` expands to the columns in scope. */
  private targets(list: unknown[] | undefined, scope: Scope): string[] {
    const outputs: string[] = [];
    for (const wrapped of list ?? []) {
      const [, target] = unwrap(wrapped);
      this.value(target.val, scope);
      if (typeof target.name === "string") {
        outputs.push(target.name);
        continue;
      }
      const [valKind, val] = unwrap(target.val);
      const fields = valKind === "ColumnRef" ? (val.fields as Node[]) : [];
      if (fields.length > 0 && "A_Star" in fields[fields.length - 1]) {
        const qualifier = names(fields.slice(0, -1))[0];
        const relations = qualifier !== undefined ? [scope.relation(qualifier)!] : scope.relations;
        for (const relation of relations) outputs.push(...relation.columns);
        continue;
      }
      outputs.push(columnName(target.val));
    }
    return outputs;
  }

  /** Adds one FROM item's relations to `scope`; a subquery not marked LATERAL sees only `outer`. */
  private fromItem(item: unknown, scope: Scope, outer: Scope | null): void {
    const [kind, node] = unwrap(item);
    switch (kind) {
      case "RangeVar":
        return this.relation(node, scope);
      case "RangeSubselect": {
        const [, body] = unwrap(node.subquery);
        const columns = this.select(body, node.lateral ? scope : outer);
        const alias = node.alias as Node | undefined;
        this.value({ alias }, scope);
        scope.relations.push({ name: alias ? String(alias.aliasname) : null, columns: new Set(renamed(columns, alias)) });
        return;
      }
      case "RangeFunction": {
        const functions = ((node.functions as Node[] | undefined) ?? []).map((f) => (unwrap(f)[1].items as unknown[] | undefined) ?? []);
        // Each call is checked first, so a refused function is named as such wherever it stands.
        for (const [call] of functions) this.value(call, scope);
        if (node.is_rowsfrom || functions.length !== 1) throw new SqlNotAllowed("ROWS FROM is not allowed in dashboard SQL", location(node));
        const [call, definitions] = functions[0];
        if ((node.coldeflist as unknown[] | undefined)?.length || (Array.isArray(definitions) && definitions.length > 0)) throw new SqlNotAllowed("a column definition list is not allowed in dashboard SQL", location(node));
        const [callKind, callNode] = unwrap(call);
        // A function in FROM may read the items before it (it is LATERAL without saying so): its call was checked in this scope above.
        if (callKind !== "FuncCall") throw new SqlNotAllowed(`${describeNode(callKind)} is not allowed in FROM in dashboard SQL`, location(node));
        const alias = node.alias as Node | undefined;
        const functionName = names(callNode.funcname).at(-1)!;
        const name = alias ? String(alias.aliasname) : functionName;
        const columns = renamed([name, ...(node.ordinality ? ["ordinality"] : [])], alias);
        scope.relations.push({ name, columns: new Set(columns) });
        return;
      }
      case "JoinExpr": {
        // Both sides of a join land in the enclosing FROM's scope; the ON condition sees them all.
        const before = scope.relations.length;
        this.fromItem(node.larg, scope, outer);
        this.fromItem(node.rarg, scope, outer);
        for (const column of names(node.usingClause)) {
          if (!scope.relations.slice(before).some((r) => r.columns.has(column))) throw new SqlUnknownName(`column "${column}" named in USING is in neither side of the join`, location(node), `column "${column}" specified in USING clause does not exist in left table`);
        }
        this.value({ quals: node.quals }, scope);
        const alias = node.alias as Node | undefined;
        if (alias) {
          const columns = scope.relations.slice(before).flatMap((r) => [...r.columns]);
          scope.relations.push({ name: String(alias.aliasname), columns: new Set(renamed(columns, alias)) });
        }
        if (node.join_using_alias) throw new SqlNotAllowed("an alias for a USING join is not allowed in dashboard SQL", location(node));
        return;
      }
      default:
        throw new SqlNotAllowed(`${describeNode(kind)} is not allowed in dashboard SQL`, location(node));
    }
  }

  private relation(node: Node, scope: Scope): void {
    const name = String(node.relname);
    const schema = node.schemaname as string | undefined;
    if (node.catalogname) throw new SqlNotAllowed(`table "${String(node.catalogname)}.${schema}.${name}" is not allowed in dashboard SQL`, location(node));
    const cte = schema === undefined ? scope.cte(name) : undefined;
    const own = this.options.ownTables;
    const warehouse = schema === undefined || schema === "public" ? ALLOWED_COLUMNS.get(name) : undefined;
    const columns = cte ?? warehouse ?? (schema === undefined ? own?.get(name) : undefined);
    if (!columns) {
      const shown = schema ? `${schema}.${name}` : name;
      throw new SqlNotAllowed(`table "${shown}" is not allowed in dashboard SQL; it may read ${[...ALLOWED_RELATIONS, ...(own?.keys() ?? [])].join(", ")}`, location(node));
    }
    const alias = node.alias as Node | undefined;
    scope.relations.push({ name: alias ? String(alias.aliasname) : name, columns: new Set(renamed(columns, alias)) });
  }

  /**
   * A column reference resolved as PostgreSQL resolves it: `c` a column of a relation in scope (or
   * an output name in ORDER BY and GROUP BY, or a relation's whole row), `t.c` a column of the
   * relation `t` in scope, `t.*` its columns. Anything else (`t.f` where f is no column, three or
   * more parts) is where PostgreSQL would try a function call, and is refused.
   */
  private columnRef(node: Node, scope: Scope): void {
    const fields = node.fields as Node[];
    const star = "A_Star" in fields[fields.length - 1];
    const parts = names(star ? fields.slice(0, -1) : fields);
    const at = location(node);
    if (parts.length === 0) return;
    if (parts.length === 1 && !star) {
      if (scope.hasColumn(parts[0])) return;
      throw new SqlUnknownName(`column "${parts[0]}" is not a column of any table in this query`, at, `column "${parts[0]}" does not exist`);
    }
    if (parts.length > 2 || (parts.length === 2 && star)) throw new SqlNotAllowed(`the column reference ${parts.join(".")} is not allowed in dashboard SQL: name a column as table.column`, at);
    const [qualifier, column] = parts;
    const relation = scope.relation(qualifier);
    if (!relation) throw new SqlUnknownName(`"${qualifier}" is not a table of this query, so ${parts.join(".")} is not allowed in dashboard SQL`, at, `missing FROM-clause entry for table "${qualifier}"`);
    if (star || relation.columns.has(column)) return;
    throw new SqlNotAllowed(`${qualifier}.${column} is not a column of ${qualifier}: PostgreSQL would read it as the call ${column}(${qualifier}), which dashboard SQL does not allow`, at, `column ${qualifier}.${column} does not exist`);
  }

  private call(node: Node, scope: Scope): void {
    const parts = names(node.funcname);
    const name = parts[parts.length - 1];
    const schema = parts.length > 1 ? parts.slice(0, -1).join(".") : null;
    if ((schema !== null && schema !== "pg_catalog") || !ALLOWED_FUNCTIONS.has(name)) {
      throw new SqlNotAllowed(`function ${parts.join(".")}() is not allowed in dashboard SQL`, location(node));
    }
    const growth = name === "replace" || name === "regexp_replace" ? replacementGrowth(name, node) : 1;
    const outer = this.growth;
    this.growth *= growth;
    if (this.growth > REPLACEMENT_GROWTH_MAX) throw new SqlNotAllowed(`${name}() nested in other replacements could build a text ${Math.round(this.growth)} times longer than its input; at most ${REPLACEMENT_GROWTH_MAX} is allowed`, location(node));
    try {
      this.value({ ...node, funcname: undefined }, scope);
    } finally {
      this.growth = outer;
    }
  }

  private operator(node: Node, scope: Scope): void {
    // BETWEEN's "name" is the keyword; its comparisons are the built-in ones.
    if (!String(node.kind).includes("BETWEEN")) this.operatorName(names(node.name), location(node));
    this.value({ ...node, name: undefined }, scope);
  }

  private operatorName(parts: string[], at: number): void {
    const symbol = parts[parts.length - 1];
    const schema = parts.length > 1 ? parts.slice(0, -1).join(".") : null;
    if ((schema !== null && schema !== "pg_catalog") || !ALLOWED_OPERATORS.has(symbol)) {
      throw new SqlNotAllowed(`operator ${parts.join(".")} is not allowed in dashboard SQL`, at);
    }
  }

  private type(typeName: Node | undefined): void {
    const node = (typeName?.TypeName as Node | undefined) ?? typeName ?? {};
    const parts = names(node.names);
    const name = parts[parts.length - 1];
    const schema = parts.length > 1 ? parts.slice(0, -1).join(".") : null;
    if (node.pct_type || node.setof || (schema !== null && schema !== "pg_catalog") || !ALLOWED_TYPES.has(name)) {
      throw new SqlNotAllowed(`a cast to ${parts.join(".") || "this type"} is not allowed in dashboard SQL`, location(node));
    }
    this.value({ typmods: node.typmods }, new Scope(null));
  }
}

/**
 * How many times longer replace(text, from, to) or regexp_replace(text, pattern, replacement, …)
 * may make its text: replace's pattern and replacement must be literals (growth: the replacement's
 * length over the pattern's), regexp_replace's replacement a literal (each character may repeat
 * the whole match, so its length bounds the growth).
 */
function replacementGrowth(name: string, node: Node): number {
  const args = (node.args as unknown[] | undefined) ?? [];
  const literal = (arg: unknown): string | null => {
    const [kind, value] = unwrap(arg);
    const sval = kind === "A_Const" ? (value.sval as { sval?: string } | undefined)?.sval : undefined;
    return typeof sval === "string" ? sval : null;
  };
  const replacement = literal(args[2]);
  if (name === "replace") {
    const pattern = literal(args[1]);
    if (pattern === null || replacement === null) throw new SqlNotAllowed("replace()'s pattern and replacement must be written as text literals in dashboard SQL", location(node));
    return Math.max(1, replacement.length / Math.max(1, pattern.length));
  }
  if (replacement === null) throw new SqlNotAllowed("regexp_replace()'s replacement must be written as a text literal in dashboard SQL", location(node));
  return Math.max(1, replacement.length);
}

/**
 * The name PostgreSQL gives an unnamed output column (FigureColname): a column's own name, a
 * function's, a cast's type, a few keywords; `?column?` for anything else. Only names PostgreSQL
 * itself would give: a name it would not give could let `t.name` pass as a column where the
 * server calls name(t).
 */
function columnName(value: unknown): string {
  const [kind, node] = unwrap(value);
  switch (kind) {
    case "ColumnRef": {
      const last = (node.fields as Node[]).at(-1);
      return last && "String" in last ? names([last])[0] : "?column?";
    }
    case "A_Indirection":
      return columnName(node.arg);
    case "FuncCall":
      return names(node.funcname).at(-1)!;
    case "A_Expr":
      return node.kind === "AEXPR_NULLIF" ? "nullif" : "?column?";
    case "TypeCast": {
      const inner = columnName(node.arg);
      if (inner !== "?column?") return inner;
      const typeNode = ((node.typeName as Node | undefined)?.TypeName as Node | undefined) ?? (node.typeName as Node | undefined);
      return names(typeNode?.names).at(-1) ?? "?column?";
    }
    case "CollateClause":
      return columnName(node.arg);
    case "GroupingFunc":
      return "grouping";
    case "SubLink":
      return node.subLinkType === "EXISTS_SUBLINK" ? "exists" : node.subLinkType === "ARRAY_SUBLINK" ? "array" : "?column?";
    case "CaseExpr":
      return "case";
    case "A_ArrayExpr":
      return "array";
    case "RowExpr":
      return "row";
    case "CoalesceExpr":
      return "coalesce";
    case "MinMaxExpr":
      return node.op === "IS_GREATEST" ? "greatest" : "least";
    case "SQLValueFunction":
      return String(node.op).replace(/^SVFOP_/, "").replace(/_N$/, "").toLowerCase();
    default:
      return "?column?";
  }
}

/** A parse-tree node kind as an author would say it. */
function describeNode(kind: string): string {
  const known: Record<string, string> = {
    XmlExpr: "an XML expression",
    XmlSerialize: "XMLSERIALIZE",
    RangeTableFunc: "XMLTABLE",
    RangeTableSample: "TABLESAMPLE",
    ColumnDef: "a column definition list",
    JsonTable: "JSON_TABLE",
    CurrentOfExpr: "WHERE CURRENT OF",
  };
  return known[kind] ?? `the SQL construct ${kind}`;
}
