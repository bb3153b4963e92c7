import { loadModule, parseSync } from "libpg-query";
import type { OwnReaderTables } from "@/lib/db/own-tables";
import { WAREHOUSE_COLUMNS } from "@/lib/db/warehouse";
import { LOCATION_COLUMNS, type RollupDefinition, type RollupPart } from "./rollup-definition";

/*
 * Rollups that cannot widen a location scope (issue 41 §4, docs/rollups.md "Scope"). A build reads the
 * whole organization and a scoped caller is then given the rollup rows of its locations, so a rollup is
 * safe only when each of its rows holds nothing but rows of the location it is filed under:
 *
 * - every expression (time, location, dimensions, measures, join conditions) is a row-level function of
 *   the source's own columns: no subquery, no function outside a list of functions PostgreSQL marks
 *   neither volatile nor set-returning (verified against pg_proc by the tests), no aggregate but the
 *   measure's own, no reference that does not resolve to a column of a table of the source;
 * - the source is warehouse tables and the organization's own tables (lib/db/own-tables.ts, by their
 *   unqualified names, as the reader's search_path resolves them) joined with ON, nothing else;
 * - the location dimension is the policy column of a location-scoped table that is never null-extended,
 *   and every other location-scoped table of the source is joined to it on equal location columns
 *   (a conjunct of an ON): then each of their rows in a source row carries that row's location, and a
 *   scoped caller's rollup rows are exactly the source rows row-level security would show it.
 *
 * Decided on PostgreSQL's own parser (libpg-query), by resolving names; whatever cannot be resolved is
 * refused. Server-only (WebAssembly): the save-time check passes it to rollupProblems, and builds and the
 * registry check stored definitions again.
 */

await loadModule();


/**
 * Functions a rollup expression may call (schema pg_catalog): every overload is a plain function that is
 * neither volatile nor set-returning (the tests read pg_proc on both engines), and none reads the clock.
 */
export const ROW_FUNCTIONS: ReadonlySet<string> = new Set(
  [
    "abs ceil ceiling floor round trunc sign sqrt cbrt power pow exp ln log log10 mod div degrees radians width_bucket gcd lcm scale",
    "sin cos tan asin acos atan atan2 float4 float8 int2 int4 int8 numeric text",
    "length char_length character_length octet_length bit_length lower upper initcap btrim ltrim rtrim substring substr position strpos",
    "replace concat concat_ws left right split_part reverse to_char to_number regexp_replace regexp_match regexp_like regexp_count",
    "regexp_substr starts_with md5 translate ascii chr string_to_array array_to_string overlay similar_to_escape like_escape",
    "date_trunc date_part extract make_date make_time make_timestamp make_timestamptz make_interval to_date to_timestamp date_bin",
    "justify_days justify_hours justify_interval isfinite timezone date",
    "array_length cardinality array_position array_remove array_append array_prepend array_cat array_lower array_upper",
    "json_build_object jsonb_build_object json_build_array jsonb_build_array to_json to_jsonb json_extract_path_text jsonb_extract_path_text",
    "json_array_length jsonb_array_length jsonb_typeof json_typeof",
  ]
    .join(" ")
    .split(" "),
);

/** Operators by symbol; every one PostgreSQL defines under these names is backed by a function that is not volatile (tested). */
export const ROW_OPERATORS: ReadonlySet<string> = new Set("= <> < > <= >= + - * / % ^ || ~~ ~~* !~~ !~~* ~ ~* !~ !~* -> ->> #> #>>".split(" "));

/** Types a value may be cast to (the parser's names). */
const ROW_TYPES: ReadonlySet<string> = new Set("int2 int4 int8 numeric float4 float8 text varchar bpchar bool date time timetz timestamp timestamptz interval json jsonb".split(" "));

/** The additive aggregates a measure is one call of (rollup-definition.ts additiveAggregate). */
const MEASURE_FUNCTIONS: ReadonlySet<string> = new Set(["sum", "count", "min", "max"]);

/** A_Expr kinds whose operator name is a keyword, expanded by PostgreSQL to the comparison operators above. */
const KEYWORD_EXPRESSIONS: ReadonlySet<string> = new Set(["AEXPR_BETWEEN", "AEXPR_NOT_BETWEEN", "AEXPR_BETWEEN_SYM", "AEXPR_NOT_BETWEEN_SYM"]);

/** Nodes that only hold other expressions: walked through, each child checked. */
const PLAIN_NODES: ReadonlySet<string> = new Set(["BoolExpr", "NullTest", "BooleanTest", "CaseExpr", "CaseWhen", "CoalesceExpr", "MinMaxExpr", "A_ArrayExpr", "List"]);

/** What a refused node is, in an editor's words. */
const NODE_NAMES: Readonly<Record<string, string>> = {
  SQLValueFunction: "the clock or the session (CURRENT_DATE, CURRENT_USER…)",
  A_Indirection: "a field selection or functional notation ((x).name, x[1])",
  ParamRef: "a parameter",
  RowExpr: "a row",
};

/** A parse-tree node: `{ Kind: fields }`. */
type Node = Record<string, Fields>;
type Fields = Record<string, unknown>;

interface Relation {
  /** What it is called in the source: its alias, or the table's name. */
  name: string;
  table: string;
  /** Inside the null-extended side of an outer join. */
  nullable: boolean;
}

/** A column reference resolved to its relation. */
interface Resolved {
  relation: Relation;
  column: string;
}

class Refused extends Error {}

const kindOf = (node: unknown): [string, Fields] => {
  if (typeof node !== "object" || node === null || Array.isArray(node)) throw new Refused("it does not parse as one expression");
  const entries = Object.entries(node as Node);
  if (entries.length !== 1) throw new Refused("it does not parse as one expression");
  return entries[0];
};

const strings = (list: unknown): string[] | null => {
  if (!Array.isArray(list)) return null;
  const out: string[] = [];
  for (const item of list) {
    const [kind, fields] = kindOf(item);
    if (kind !== "String" || typeof fields.sval !== "string") return null;
    out.push(fields.sval);
  }
  return out;
};

/** A name in pg_catalog: unqualified, or qualified with pg_catalog. */
const catalogName = (names: string[] | null): string | null => {
  if (names === null || names.length === 0 || names.length > 2) return null;
  if (names.length === 2 && names[0] !== "pg_catalog") return null;
  return names.at(-1)!;
};

function parseSelect(sql: string): Fields {
  let parsed: { stmts?: { stmt?: Node }[] };
  try {
    parsed = parseSync(sql) as typeof parsed;
  } catch (error) {
    throw new Refused(`it does not parse (${(error as Error).message})`);
  }
  if (parsed.stmts?.length !== 1 || !parsed.stmts[0].stmt) throw new Refused("it is not one expression");
  const [kind, select] = kindOf(parsed.stmts[0].stmt);
  if (kind !== "SelectStmt") throw new Refused("it is not one expression");
  return select;
}

/** Only these keys of a SELECT: anything else (WITH, DISTINCT, GROUP BY, a set operation…) means the text is more than asked for. */
function onlyClauses(select: Fields, allowed: readonly string[]): void {
  for (const key of Object.keys(select)) {
    if (key === "limitOption" || key === "op") continue;
    if (!allowed.includes(key)) throw new Refused("it holds more than one expression");
  }
  if (select.op !== "SETOP_NONE" || select.limitOption !== "LIMIT_OPTION_DEFAULT") throw new Refused("it holds more than one expression");
}

/**
 * A table a source may read: its columns, and when row-level security scopes it by location, the column its policy
 * tests. `scoped` without `location`: scoped by a column of location codes, which cannot file a rollup row (the
 * rollup's rows are scoped by location id).
 */
interface CatalogTable {
  columns: readonly string[];
  scoped: boolean;
  location?: string;
  /**
   * A column of location codes: an own table's policy column when it is scoped by code, or `locations.code` (the
   * column that policy looks codes up in, lib/data/storage.ts). An equality between one of each ties them.
   */
  codes?: { column: string; policy: boolean };
}

/** The warehouse column an own table's by-code location policy reads codes from (unique per organization, migration 0001). */
const LOCATION_CODES = { table: "locations", column: "code" } as const;

/** The organization's own tables as the scope rule reads them (lib/db/own-tables.ts). */
export type OwnRollupTables = Pick<OwnReaderTables, "columns" | "locations">;

/** The tables a source may read: the warehouse (by bare or `public.` name), then the organization's own (bare names only). */
class Catalog {
  constructor(private readonly own: OwnRollupTables | undefined) {}

  find(schema: unknown, table: string): CatalogTable | undefined {
    if (schema === undefined || schema === "public") {
      if (Object.hasOwn(WAREHOUSE_COLUMNS, table)) {
        const location = Object.hasOwn(LOCATION_COLUMNS, table) ? LOCATION_COLUMNS[table] : undefined;
        const codes = table === LOCATION_CODES.table ? { column: LOCATION_CODES.column, policy: false } : undefined;
        return { columns: WAREHOUSE_COLUMNS[table], scoped: location !== undefined, location, codes };
      }
    }
    const columns = schema === undefined ? this.own?.columns.get(table) : undefined;
    if (!columns) return undefined;
    const location = this.own?.locations.get(table);
    return {
      columns,
      scoped: location !== undefined,
      location: location?.by === "id" ? location.column : undefined,
      codes: location?.by === "code" ? { column: location.column, policy: true } : undefined,
    };
  }

  names(): string {
    return [...Object.keys(WAREHOUSE_COLUMNS), ...(this.own?.columns.keys() ?? [])].join(", ");
  }
}

/** The source's relations, in order, and its join conditions with the relations on each side. */
interface Source {
  tables: Map<string, CatalogTable>;
  relations: Map<string, Relation>;
  joins: { type: string; left: Relation[]; right: Relation[]; quals: unknown }[];
}

function readSource(text: string, catalog: Catalog): Source {
  // A sentinel after the text: a trailing comment or clause of the text swallows or breaks it.
  const select = parseSelect(`SELECT 0 FROM ${text} WHERE TRUE`);
  onlyClauses(select, ["targetList", "fromClause", "whereClause"]);
  const [whereKind, where] = kindOf(select.whereClause);
  if (whereKind !== "A_Const" || (where.boolval as { boolval?: boolean } | undefined)?.boolval !== true) throw new Refused("it holds more than its tables");
  const source: Source = { tables: new Map(), relations: new Map(), joins: [] };
  const item = (node: unknown, nullable: boolean): Relation[] => {
    const [kind, fields] = kindOf(node);
    if (kind === "RangeVar") {
      const table = String(fields.relname);
      const found = fields.catalogname === undefined ? catalog.find(fields.schemaname, table) : undefined;
      if (!found) {
        throw new Refused(`it reads ${[fields.schemaname, table].filter(Boolean).join(".")}: a rollup's source reads only the warehouse tables and the organization's own (${catalog.names()})`);
      }
      source.tables.set(table, found);
      const alias = fields.alias as { aliasname?: string; colnames?: unknown } | undefined;
      if (alias?.colnames !== undefined) throw new Refused(`it renames the columns of ${table}`);
      const relation: Relation = { name: alias?.aliasname ?? table, table, nullable };
      if (source.relations.has(relation.name)) throw new Refused(`it names ${relation.name} twice`);
      source.relations.set(relation.name, relation);
      return [relation];
    }
    if (kind === "JoinExpr") {
      if (fields.isNatural || fields.usingClause !== undefined) throw new Refused("it joins with NATURAL or USING: write each join's condition with ON");
      if (fields.alias !== undefined) throw new Refused("it names a join with an alias");
      const type = String(fields.jointype);
      if (!["JOIN_INNER", "JOIN_LEFT", "JOIN_RIGHT", "JOIN_FULL"].includes(type)) throw new Refused(`it holds a join of kind ${type}`);
      const left = item(fields.larg, nullable || type === "JOIN_RIGHT" || type === "JOIN_FULL");
      const right = item(fields.rarg, nullable || type === "JOIN_LEFT" || type === "JOIN_FULL");
      if (fields.quals !== undefined) source.joins.push({ type, left, right, quals: fields.quals });
      return [...left, ...right];
    }
    throw new Refused(`it reads a ${kind === "RangeSubselect" ? "subquery" : kind === "RangeFunction" ? "function" : kind}: a rollup's source joins tables only`);
  };
  for (const node of select.fromClause as unknown[]) item(node, false);
  return source;
}

function resolveColumn(fields: Fields, source: Source): Resolved {
  const names = strings(fields.fields);
  if (names === null) throw new Refused("it reads a whole row (*), which is not a column");
  const shown = names.join(".");
  if (names.length === 1) {
    const found = [...source.relations.values()].filter((r) => source.tables.get(r.table)!.columns.includes(names[0]));
    if (found.length === 1) return { relation: found[0], column: names[0] };
    throw new Refused(found.length === 0 ? `'${shown}' is no column of the source's tables` : `'${shown}' is a column of several of the source's tables: name its table`);
  }
  const relation = names.length === 2 ? source.relations.get(names[0]) : undefined;
  if (relation && source.tables.get(relation.table)!.columns.includes(names[1])) return { relation, column: names[1] };
  throw new Refused(`'${shown}' is no column of the source's tables (write a column as table.column)`);
}

/** Checks an expression is a row-level function of the source's columns; `aggregate`: a measure, one additive aggregate over one. */
function checkRowLevel(node: unknown, source: Source, aggregate = false): void {
  const [kind, fields] = kindOf(node);
  if (aggregate && kind !== "FuncCall") throw new Refused("a measure is one call of sum, count, min or max spanning the whole expression");
  switch (kind) {
    case "A_Const":
      return;
    case "ColumnRef":
      resolveColumn(fields, source);
      return;
    case "SubLink":
      throw new Refused("it holds a subquery, which reads rows beyond its own");
    case "FuncCall": {
      const name = catalogName(strings(fields.funcname));
      const shown = (strings(fields.funcname) ?? []).join(".");
      if (fields.over !== undefined) throw new Refused(`it calls ${shown} as a window function`);
      if (aggregate) {
        if (name === null || !MEASURE_FUNCTIONS.has(name)) throw new Refused(`a measure is one call of sum, count, min or max, not ${shown}`);
        if (fields.agg_distinct || fields.agg_filter !== undefined || fields.agg_order !== undefined || fields.agg_within_group || fields.func_variadic) {
          throw new Refused("a measure is one plain call of sum, count, min or max (no DISTINCT, FILTER, ORDER BY or VARIADIC)");
        }
        if (fields.agg_star) {
          if (name !== "count" || fields.args !== undefined) throw new Refused(`${shown}(*) is not a measure`);
          return;
        }
        const args = fields.args as unknown[] | undefined;
        if (args?.length !== 1) throw new Refused(`a measure's ${shown} takes one argument`);
        checkRowLevel(args[0], source);
        return;
      }
      if (name === null || !ROW_FUNCTIONS.has(name)) throw new Refused(`it calls ${shown}, which is not a row-level function a rollup may hold (aggregates, window, set-returning and volatile functions, and the clock, are not)`);
      if (fields.agg_star || fields.agg_distinct || fields.agg_filter !== undefined || fields.agg_order !== undefined || fields.agg_within_group) throw new Refused(`it calls ${shown} as an aggregate`);
      for (const arg of (fields.args as unknown[] | undefined) ?? []) checkRowLevel(arg, source);
      return;
    }
    case "A_Expr": {
      const name = catalogName(strings(fields.name));
      if (name === null || (!ROW_OPERATORS.has(name) && !KEYWORD_EXPRESSIONS.has(String(fields.kind)))) throw new Refused(`it applies operator ${(strings(fields.name) ?? []).join(".")}, which a rollup may not hold`);
      if (fields.lexpr !== undefined) checkRowLevel(fields.lexpr, source);
      if (fields.rexpr !== undefined) checkRowLevel(fields.rexpr, source);
      return;
    }
    case "TypeCast": {
      const type = fields.typeName as { names?: unknown; typmods?: unknown[] } | undefined;
      const name = catalogName(strings(type?.names));
      if (name === null || !ROW_TYPES.has(name)) throw new Refused(`it casts to ${(strings(type?.names) ?? []).join(".")}, which a rollup may not hold`);
      for (const typmod of type?.typmods ?? []) checkRowLevel(typmod, source);
      checkRowLevel(fields.arg, source);
      return;
    }
    case "CollateClause":
      checkRowLevel(fields.arg, source);
      return;
    default:
      if (!PLAIN_NODES.has(kind)) throw new Refused(`it holds ${NODE_NAMES[kind] ?? `a ${kind} node`}, which is not a row-level function of the source's columns`);
      for (const value of Object.values(fields)) {
        if (Array.isArray(value)) value.forEach((child) => checkRowLevel(child, source));
        else if (typeof value === "object" && value !== null) checkRowLevel(value, source);
      }
  }
}

/** One expression of the definition, parsed alone: exactly one target, nothing else. */
function parseExpression(text: string): unknown {
  const select = parseSelect(`SELECT ${text}, 0 AS quarry_rollup_end`);
  onlyClauses(select, ["targetList"]);
  const targets = select.targetList as Node[];
  // Two targets, the second the sentinel: a comment or a comma in the text would make it more or fewer.
  if (targets.length !== 2 || kindOf(targets[1])[1].name !== "quarry_rollup_end") throw new Refused("it is not one expression");
  const [, target] = kindOf(targets[0]);
  if (target.name !== undefined) throw new Refused("it names its value (AS)");
  return target.val;
}

/** The conjuncts of a join condition (its top-level AND). */
function conjuncts(node: unknown): unknown[] {
  const [kind, fields] = kindOf(node);
  return kind === "BoolExpr" && fields.boolop === "AND_EXPR" ? (fields.args as unknown[]).flatMap(conjuncts) : [node];
}

/**
 * `a = b` between two location columns of location-scoped tables, as their relations; null otherwise. Location ids
 * tie to location ids; a by-code policy column ties to another or to `locations.code` (codes are unique in an
 * organization, so the code names exactly the location row beside it, and the by-code row is visible to a caller
 * exactly when that location is). Two `locations.code` never tie: neither is a policy column.
 */
function locationEquality(node: unknown, source: Source): [Relation, Relation] | null {
  const [kind, fields] = kindOf(node);
  if (kind !== "A_Expr" || fields.kind !== "AEXPR_OP" || catalogName(strings(fields.name)) !== "=") return null;
  const side = (operand: unknown): { relation: Relation; kind: "id" | "code" | "code_of" } | null => {
    const [operandKind, operandFields] = kindOf(operand);
    if (operandKind !== "ColumnRef") return null;
    const { relation, column } = resolveColumn(operandFields, source);
    const table = source.tables.get(relation.table)!;
    if (table.location === column) return { relation, kind: "id" };
    if (table.codes?.column === column) return { relation, kind: table.codes.policy ? "code" : "code_of" };
    return null;
  };
  const a = side(fields.lexpr);
  const b = side(fields.rexpr);
  if (!a || !b) return null;
  const kinds = [a.kind, b.kind].sort().join();
  return kinds === "id,id" || kinds === "code,code" || kinds === "code,code_of" ? [a.relation, b.relation] : null;
}

/**
 * Whether every location-scoped relation carries the location of `anchor` in each source row it is not
 * null in: `follows` holds X -> Y when X being non-null in a row implies Y is non-null there with an equal
 * location. An inner join's ON holds in every row its relations are in (both ways); an outer join's ON holds
 * only where its null-extended side is present (from that side).
 */
function unjoinedRelations(source: Source, anchor: Relation): Relation[] {
  const follows = new Map<Relation, Set<Relation>>();
  const edge = (from: Relation, to: Relation) => follows.set(from, (follows.get(from) ?? new Set()).add(to));
  for (const join of source.joins) {
    if (join.type === "JOIN_FULL") continue;
    const extended = new Set(join.type === "JOIN_LEFT" ? join.right : join.type === "JOIN_RIGHT" ? join.left : []);
    for (const conjunct of conjuncts(join.quals)) {
      const pair = locationEquality(conjunct, source);
      if (!pair) continue;
      const [a, b] = pair;
      if (join.type === "JOIN_INNER" || extended.has(a)) edge(a, b);
      if (join.type === "JOIN_INNER" || extended.has(b)) edge(b, a);
    }
  }
  const reaches = (start: Relation): boolean => {
    const seen = new Set([start]);
    const stack = [start];
    while (stack.length > 0) {
      const at = stack.pop()!;
      if (at === anchor) return true;
      for (const next of follows.get(at) ?? []) {
        if (seen.has(next)) continue;
        seen.add(next);
        stack.push(next);
      }
    }
    return false;
  };
  return [...source.relations.values()].filter((r) => source.tables.get(r.table)!.scoped && !reaches(r));
}

/**
 * Every way a definition could give a scoped caller rows outside its scope, or depend on more than its
 * rows' own columns, each with the part it is about. Empty: safe to build and to answer from. `own`: the
 * organization's own tables (without them a source naming one is refused).
 */
export function rollupScopeProblems(definition: RollupDefinition, own?: OwnRollupTables): { part: RollupPart; message: string }[] {
  const problems: { part: RollupPart; message: string }[] = [];
  const attempt = (part: RollupPart, what: string, check: () => void) => {
    try {
      check();
    } catch (error) {
      if (!(error instanceof Refused)) throw error;
      problems.push({ part, message: `${what}: ${error.message}` });
    }
  };
  let source: Source | undefined;
  attempt({ kind: "source" }, `the source '${definition.source}' cannot be rolled up`, () => {
    source = readSource(definition.source, new Catalog(own));
    for (const join of source.joins) checkRowLevel(join.quals, source);
  });
  if (!source) return problems;
  const from = source;
  const rowLevel = (part: RollupPart, text: string, aggregate = false) =>
    attempt(part, `'${text}' cannot be held by a rollup`, () => checkRowLevel(parseExpression(text), from, aggregate));
  rowLevel({ kind: "time" }, definition.time.column);
  definition.dimensions.forEach((expression) => rowLevel({ kind: "dimension", expression }, expression));
  definition.measures.forEach((measure) => rowLevel({ kind: "measure", expression: measure.expression }, measure.expression, true));

  const scoped = [...from.relations.values()].filter((r) => from.tables.get(r.table)!.scoped);
  if (definition.location === null) {
    if (scoped.length > 0) problems.push({ part: { kind: "location" }, message: `the source reads location-scoped rows (${scoped.map((r) => r.name).join(", ")}): a rollup of it needs a location dimension` });
    return problems;
  }
  const location = definition.location;
  attempt({ kind: "location" }, `the location dimension '${location}' cannot scope the rollup`, () => {
    const [kind, fields] = kindOf(parseExpression(location));
    const anchor = kind === "ColumnRef" ? resolveColumn(fields, from) : null;
    const policyColumns = [...from.tables].flatMap(([table, t]) => (t.location ? [`${table}.${t.location}`] : []));
    if (!anchor || from.tables.get(anchor.relation.table)!.location !== anchor.column) {
      const codes = anchor ? from.tables.get(anchor.relation.table)!.codes : undefined;
      throw new Refused(
        anchor && codes?.policy && codes.column === anchor.column
          ? `${anchor.relation.name}.${anchor.column} holds location codes and a rollup files its rows by location id: join locations ON locations.code = ${anchor.relation.name}.${anchor.column} and name locations.id`
          : `it must be the column a location policy tests (${[...new Set([...Object.entries(LOCATION_COLUMNS).map(([t, c]) => `${t}.${c}`), ...policyColumns])].join(", ")}) of a table of the source`,
      );
    }
    if (anchor.relation.nullable) throw new Refused(`${anchor.relation.name} is on the null side of an outer join, so a row could have no location`);
    const unjoined = unjoinedRelations(from, anchor.relation);
    if (unjoined.length > 0) {
      throw new Refused(
        `${unjoined.map((r) => r.name).join(", ")} ${unjoined.length === 1 ? "is" : "are"} not joined to ${anchor.relation.name} on equal locations ` +
          `(an ON condition such as ${unjoined[0].name}.${from.tables.get(unjoined[0].table)!.location ?? "<its location id>"} = ${anchor.relation.name}.${anchor.column}), so a row filed under one location could hold another location's rows`,
      );
    }
  });
  return problems;
}
