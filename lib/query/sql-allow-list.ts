import { loadModule, parseSync } from "libpg-query";

/*
 * What SQL written in a manifest may do, decided on PostgreSQL's own parser (libpg-query: the
 * server's grammar compiled to WebAssembly), never on a lexer or a list of forbidden names.
 * A statement is accepted only when every node of its parse tree is of a kind listed here and
 * every function, operator, type and relation it names is listed here, compared after the parser
 * has decoded quoting and U& escapes. Anything else (a function that runs SQL text, touches
 * the server or sleeps, a table outside the warehouse, a data-modifying CTE, SELECT INTO, a
 * locking clause, a cast to regclass) is refused, naming what was found.
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
export const ALLOWED_RELATIONS: ReadonlySet<string> = new Set(["orders", "locations", "products", "sales_targets", "organizations", "rollup_rows"]);

/**
 * Functions by name (schema `pg_catalog` or unqualified). Aggregates, window functions,
 * arithmetic, text, date and time, JSON building, arrays, conditional helpers; nothing that
 * executes SQL text, reads server state or files, sleeps, locks, or builds very large values
 * from a small input (repeat, lpad and rpad could ask for a gigabyte from one row).
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
    "regexp_substr regexp_split_to_array starts_with md5 translate ascii chr string_to_array array_to_string overlay format",
    "normalize text similar_to_escape like_escape",
    // date and time
    "now current_date date_trunc date_part extract age make_date make_time make_timestamp make_timestamptz make_interval to_date",
    "to_timestamp date_bin justify_days justify_hours justify_interval isfinite timezone statement_timestamp transaction_timestamp",
    "clock_timestamp date",
    // conditional, arrays, JSON, rows
    "generate_series unnest array_length cardinality array_position array_positions array_remove array_append array_prepend",
    "array_cat array_lower array_upper json_build_object jsonb_build_object json_build_array jsonb_build_array to_json to_jsonb",
    "row_to_json json_extract_path_text jsonb_extract_path_text json_array_length jsonb_array_length jsonb_typeof json_typeof",
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

/** Parse-tree nodes that only hold other nodes or plain values; each is walked through. */
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
  "JoinExpr",
  "RangeSubselect",
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
  "A_Indirection",
  "RowExpr",
  "CollateClause",
  "NamedArgExpr",
  "ColumnRef",
  "RangeFunction",
]);

export class SqlNotAllowed extends Error {
  constructor(
    message: string,
    /** Offset into the checked text, when the parser knows it. */
    readonly position: number,
  ) {
    super(message);
    this.name = "SqlNotAllowed";
  }
}

export interface AllowListOptions {
  /** Bind parameters ($1…) are ours: allowed in statements Quarry compiled, never in text a user wrote. */
  allowParams?: boolean;
}

type Node = Record<string, unknown>;

/**
 * Checks one statement: exactly one SELECT (WITH, VALUES and set operations included), every
 * part of it on the allow-lists. Throws SqlNotAllowed naming the first thing refused.
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
  new Walker(options).node("SelectStmt", statements[0].stmt.SelectStmt as Node, new Set());
}

/** Checks an expression spliced into a generated SELECT list (a dimension column, a `sql` metric). */
export function checkExpression(expression: string): void {
  const prefix = "SELECT ";
  shifted(prefix.length, () => checkStatement(`${prefix}${expression}`));
}

/** Checks a `from` source spliced into a generated statement (a table, a join, a subquery). */
export function checkSource(source: string): void {
  const prefix = "SELECT 1 FROM ";
  shifted(prefix.length, () => checkStatement(`${prefix}${source}`));
}

function shifted(by: number, check: () => void): void {
  try {
    check();
  } catch (error) {
    if (error instanceof SqlNotAllowed) throw new SqlNotAllowed(error.message, Math.max(0, error.position - by));
    throw error;
  }
}

const names = (list: unknown): string[] => ((list as Node[] | undefined) ?? []).map((item) => String((item.String as { sval?: string } | undefined)?.sval ?? ""));
const location = (node: Node): number => (typeof node.location === "number" ? node.location : 0);

class Walker {
  constructor(private readonly options: AllowListOptions) {}

  /** Walks any value: arrays, node wrappers `{Kind: {...}}`, and plain fields. */
  value(value: unknown, ctes: ReadonlySet<string>): void {
    if (Array.isArray(value)) {
      for (const item of value) this.value(item, ctes);
      return;
    }
    if (typeof value !== "object" || value === null) return;
    for (const [key, child] of Object.entries(value)) {
      if (/^[A-Z]/.test(key)) this.node(key, child as Node, ctes);
      else this.value(child, ctes);
    }
  }

  node(kind: string, node: Node, ctes: ReadonlySet<string>): void {
    switch (kind) {
      case "SelectStmt":
        return this.select(node, ctes);
      case "RangeVar":
        return this.relation(node, ctes);
      case "FuncCall":
        return this.call(node, ctes);
      case "A_Expr":
        return this.operator(node, ctes);
      case "SubLink":
        if (node.operName) this.operatorName(names(node.operName), location(node));
        return this.value(node, ctes);
      case "TypeCast":
        this.type(node.typeName as Node);
        return this.value({ arg: node.arg }, ctes);
      case "SQLValueFunction":
        if (!ALLOWED_VALUE_FUNCTIONS.has(String(node.op))) throw new SqlNotAllowed(`${String(node.op).replace(/^SVFOP_/, "")} is not allowed in dashboard SQL`, location(node));
        return;
      case "ParamRef":
        if (!this.options.allowParams) throw new SqlNotAllowed("bind parameters are not allowed; use filters", location(node));
        return;
      default:
        if (!PLAIN_NODES.has(kind)) throw new SqlNotAllowed(`${describeNode(kind)} is not allowed in dashboard SQL`, location(node));
        return this.value(node, ctes);
    }
  }

  private select(node: Node, outer: ReadonlySet<string>): void {
    if (node.intoClause) throw new SqlNotAllowed("SELECT INTO is not allowed: dashboard SQL only reads", 0);
    if ((node.lockingClause as unknown[] | undefined)?.length) throw new SqlNotAllowed("FOR UPDATE/SHARE is not allowed: dashboard SQL only reads", 0);
    let scope = outer;
    const withClause = node.withClause as { WithClause?: Node } | Node | undefined;
    const clause = (withClause && "WithClause" in withClause ? withClause.WithClause : withClause) as Node | undefined;
    if (clause) {
      const ctes = (clause.ctes as { CommonTableExpr: Node }[]).map((c) => c.CommonTableExpr);
      const all = new Set([...outer, ...ctes.map((c) => String(c.ctename))]);
      const visible = new Set(outer);
      for (const cte of ctes) {
        const [bodyKind] = Object.keys(cte.ctequery as Node);
        if (bodyKind !== "SelectStmt") throw new SqlNotAllowed(`WITH ${String(cte.ctename)} may only read (SELECT), not ${bodyKind.replace(/Stmt$/, "").toUpperCase()}`, location(cte));
        if (cte.search_clause || cte.cycle_clause) throw new SqlNotAllowed("SEARCH and CYCLE clauses are not allowed in dashboard SQL", location(cte));
        // A recursive WITH sees all its names in every body; otherwise each body sees the ones before it.
        this.select((cte.ctequery as Node).SelectStmt as Node, clause.recursive ? all : visible);
        visible.add(String(cte.ctename));
      }
      scope = all;
    }
    // The branches of UNION/INTERSECT/EXCEPT are SELECTs written without their node wrapper.
    for (const branch of [node.larg, node.rarg]) if (branch) this.select(branch as Node, scope);
    this.value({ ...node, withClause: undefined, larg: undefined, rarg: undefined }, scope);
  }

  private relation(node: Node, ctes: ReadonlySet<string>): void {
    const name = String(node.relname);
    const schema = node.schemaname as string | undefined;
    if (node.catalogname) throw new SqlNotAllowed(`table "${String(node.catalogname)}.${schema}.${name}" is not allowed in dashboard SQL`, location(node));
    if (!schema && ctes.has(name)) return this.value({ alias: node.alias }, ctes);
    if ((schema === undefined || schema === "public") && ALLOWED_RELATIONS.has(name)) return this.value({ alias: node.alias }, ctes);
    const shown = schema ? `${schema}.${name}` : name;
    throw new SqlNotAllowed(`table "${shown}" is not allowed in dashboard SQL; it may read ${[...ALLOWED_RELATIONS].join(", ")}`, location(node));
  }

  private call(node: Node, ctes: ReadonlySet<string>): void {
    const parts = names(node.funcname);
    const name = parts[parts.length - 1];
    const schema = parts.length > 1 ? parts.slice(0, -1).join(".") : null;
    if ((schema !== null && schema !== "pg_catalog") || !ALLOWED_FUNCTIONS.has(name)) {
      throw new SqlNotAllowed(`function ${parts.join(".")}() is not allowed in dashboard SQL`, location(node));
    }
    this.value({ ...node, funcname: undefined }, ctes);
  }

  private operator(node: Node, ctes: ReadonlySet<string>): void {
    // BETWEEN's "name" is the keyword; its comparisons are the built-in ones.
    if (!String(node.kind).includes("BETWEEN")) this.operatorName(names(node.name), location(node));
    this.value({ ...node, name: undefined }, ctes);
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
    this.value({ typmods: node.typmods }, new Set());
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
