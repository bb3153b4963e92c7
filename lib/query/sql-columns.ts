import "server-only";
import { loadModule, parseSync } from "libpg-query";
import type { WidgetManifest } from "@/lib/manifest/schema";

await loadModule();

interface ParsedTarget {
  ResTarget?: { name?: string; val?: { ColumnRef?: { fields?: ({ String?: { sval?: string } } | { A_Star?: object })[] } } };
}

const MEMO_LIMIT = 500;
const memo = new Map<string, ReadonlySet<string> | null>();

/**
 * The names of the columns a statement returns, read from PostgreSQL's own parse tree, when they do
 * not depend on the schema: every output is aliased (`count(*) AS orders`) or a column reference
 * (`o.channel` is named `channel`), exactly as PostgreSQL names them. Null otherwise (`*`, an
 * unaliased expression, a set operation, a statement that does not parse): the caller then learns
 * the columns by running it.
 */
export function statementColumns(sql: string): ReadonlySet<string> | null {
  if (memo.has(sql)) return memo.get(sql)!;
  const columns = readColumns(sql);
  if (memo.size >= MEMO_LIMIT) memo.delete(memo.keys().next().value as string);
  memo.set(sql, columns);
  return columns;
}

function readColumns(sql: string): ReadonlySet<string> | null {
  let select: { targetList?: ParsedTarget[]; op?: string } | undefined;
  try {
    const { stmts } = parseSync(sql) as { stmts: { stmt: { SelectStmt?: typeof select } }[] };
    if (stmts.length !== 1) return null;
    select = stmts[0].stmt.SelectStmt;
  } catch {
    return null;
  }
  if (!select?.targetList || (select.op !== undefined && select.op !== "SETOP_NONE")) return null;
  const names = new Set<string>();
  for (const target of select.targetList) {
    const res = target.ResTarget;
    if (!res) return null;
    if (res.name !== undefined) {
      names.add(res.name);
      continue;
    }
    const last = res.val?.ColumnRef?.fields?.at(-1);
    const name = last && "String" in last ? last.String?.sval : undefined;
    if (name === undefined) return null;
    names.add(name);
  }
  return names;
}

/**
 * The columns an `sql` widget's statement returns, when its text says (statementColumns); null for
 * every other widget. A `*` binding on a field outside them does not apply to the widget: the engine
 * does not push it (it would fail and be dropped) and the result cache's key leaves it out, so a filter
 * the widget cannot use does not make it miss the cache.
 */
export function sqlWidgetColumns(widget: WidgetManifest): ReadonlySet<string> | null {
  const data = widget.spec.data;
  return data?.kind === "sql" ? statementColumns(data.query ?? "") : null;
}
