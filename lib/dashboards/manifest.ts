import crypto from "node:crypto";
import { type ValidationItem } from "@/lib/errors";
import { checkSqlQuery } from "@/lib/query/sql-text";
import { manifestValidationItems } from "@/lib/manifest/errors";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import type { ParsedDashboard } from "@/lib/manifest/schema";
import { placedWidgetIds } from "./wiring";
import type { ServerSqlPolicy } from "@/lib/manifest-check/references";
import { rollupScopeProblems } from "@/lib/query/rollup-scope";
import { checkExpression, checkSource, checkStatement } from "@/lib/query/sql-allow-list";
import { currentOwnTables } from "@/lib/db/own-tables";
import { currentSharedDatasets } from "@/lib/datasets/store";

/**
 * The server's check of manifest SQL: PostgreSQL's parser and the allow-list, with the lexer's trailing `;` removed
 * first; and rollups that cannot widen a location scope.
 */
export const SQL_ALLOW_LIST: ServerSqlPolicy = {
  query: (text) => checkStatement(checkSqlQuery(text), ownTablesOption()),
  expression: (expression, source) => checkExpression(expression, source, ownTablesOption()),
  source: (source) => checkSource(source, ownTablesOption()),
  rollup: (definition) => rollupScopeProblems(definition, currentOwnTables()),
};

/** The organization's own tables, when the work is one organization's (lib/db/own-tables.ts withOwnTables). */
function ownTablesOption() {
  const own = currentOwnTables();
  return own && own.columns.size > 0 ? { ownTables: own.columns } : {};
}

/** A manifest that passed validation: the dashboard, its widgets in order and by id, its datasets. */
export type ValidManifest = ParsedDashboard;

export type ManifestResult = { ok: true; value: ValidManifest } | { ok: false; errors: ValidationItem[] };

/** Parses and validates spec_yaml; errors become 422 items with the YAML position. */
export function parseManifest(specYaml: string): ManifestResult {
  // On the server refs always resolve: outside an organization's work there are no shared datasets (fail closed).
  const result = parseDashboardYaml(specYaml, { sqlPolicy: SQL_ALLOW_LIST, sharedDatasets: currentSharedDatasets()?.byId ?? new Map() });
  return result.ok ? { ok: true, value: result.dashboard } : { ok: false, errors: manifestValidationItems(result.errors) };
}

const cache = new Map<string, ManifestResult>();

/** parseManifest memoized by content: stored manifests are parsed once per process, not per request. */
export function parseManifestCached(specYaml: string): ManifestResult {
  // A manifest naming an organization's own table validates against that organization's catalog.
  const own = currentOwnTables();
  const hash = crypto.createHash("sha256").update(specYaml).digest("base64url");
  const shared = currentSharedDatasets();
  const key = `${own && own.columns.size > 0 ? own.stamp : ""}:${shared && shared.byId.size > 0 ? shared.stamp : ""}:${hash}`;
  let hit = cache.get(key);
  if (!hit) {
    hit = parseManifest(specYaml);
    if (cache.size > 500) cache.delete(cache.keys().next().value as string);
    cache.set(key, hit);
  }
  return hit;
}

const served = new WeakMap<ValidManifest, ValidManifest>();

/**
 * The manifest as it is served (pages, previews, embeds, public links, queries): without parked
 * widgets, those a dashboard with tabs lists in no tab and no band. They are never shown, queried
 * (the query answers as for an unknown id) or sent to a browser, and a parked filter filters
 * nothing. The result is cached with the parse it came from.
 */
export function servedManifest(result: ManifestResult): ManifestResult {
  if (!result.ok) return result;
  const parsed = result.value;
  let value = served.get(parsed);
  if (!value) {
    const placed = placedWidgetIds(parsed.manifest, parsed.widgets);
    if (parsed.widgets.every((w) => placed.has(w.metadata.id))) value = parsed;
    else {
      const widgets = parsed.widgets.filter((w) => placed.has(w.metadata.id));
      value = { ...parsed, widgets, widgetsById: new Map(widgets.map((w) => [w.metadata.id, w])) };
    }
    served.set(parsed, value);
  }
  return { ok: true, value };
}
