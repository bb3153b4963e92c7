import "server-only";
import type { z } from "zod";
import { isOrganizationAdmin, type Principal } from "@/lib/access/roles";
import { findOrganization } from "@/lib/auth/directory";
import type { TenantScope } from "@/lib/db/tenant";
import { Invalid, Unavailable, forbidden, notFound } from "@/lib/errors";
import { log } from "@/lib/log";
import { QueryError } from "@/lib/query/errors";
import type { FieldViewer } from "@/lib/query/field-policy";
import { BatchTransactionSpent, DEFAULT_STATEMENT_TIMEOUT_MS, type StatementRunner, runReadOnlyBatch } from "@/lib/query/execute";
import { type WidgetPlan, type WidgetQueryResult, planWidget, runWidgetQuery, sharedScans } from "@/lib/query/run";
import { dashboardRollups } from "@/lib/query/rollup-definition";
import { sendRollupRefresh } from "@/lib/rollups/jobs";
import { currentWarehouseVersion, freshRollups } from "@/lib/rollups/registry";
import type { QueryBody, WidgetResult } from "./contract";
import type { EmbedGrant } from "./policy";
import { DEFAULT_CURRENCY, type OrgLocale } from "./format";
import { isDataWidget } from "./wiring";
import type { ValidManifest } from "./manifest";
import { UNAVAILABLE_TO_ANONYMOUS, UNPASSABLE_TO_VIEWERS, grantForEmbed, grantForPrincipal, grantForPublic, isEditor, type GrantedDashboard } from "./policy";
import { getCachedResult, putCachedResult, widgetResultKey } from "./result-cache";

/**
 * What one dashboard request may cost, whoever sends it (docs/dashboards-engine.md). Widgets are
 * counted after duplicates are removed; rows are those the widgets return; time is wall clock
 * from the first widget, and each statement's own time limit is cut to what is left of it.
 */
export interface QueryBudget {
  maxWidgets: number;
  maxRows: number;
  maxMs: number;
}

export const DEFAULT_QUERY_BUDGET: QueryBudget = { maxWidgets: 100, maxRows: 100_000, maxMs: 30_000 };

interface RunInput {
  scope: TenantScope;
  /** Whose field policies apply (GrantedDashboard.viewer). */
  viewer: FieldViewer;
  dashboardId: string;
  /** A published version number, or `draft@<revision>`. */
  version: number | string;
  manifest: ValidManifest;
  filters: Record<string, unknown>;
  widgetIds?: string[];
  timeZone: string;
  /** Recompute instead of reading the cache (the fresh result still replaces the cached one). */
  refresh?: boolean;
  budget?: QueryBudget;
}


/**
 * Identical requests being computed in this process, by the keys of their widgets: a second one
 * arriving while the first runs waits for its answer instead of scanning the warehouse again (a
 * published dashboard's cache expiring under many viewers). Only a wait, never a stored result:
 * the cache below is what keeps answers.
 */
const inFlight = new Map<string, Promise<Record<string, WidgetResult>>>();

/**
 * Computes (or serves from cache) every requested widget once, however often it is asked for;
 * one widget's failure is its own `error`. A request past its budget fails as a whole (422 for
 * too many widgets, before anything runs; 503 for rows or time) and writes nothing to the cache,
 * so repeating it cannot make progress piece by piece.
 */
async function runWidgets(input: RunInput): Promise<Record<string, WidgetResult>> {
  const budget = input.budget ?? DEFAULT_QUERY_BUDGET;
  const wanted = [...new Set(input.widgetIds ?? input.manifest.widgets.filter(isDataWidget).map((w) => w.metadata.id))];
  if (wanted.length > budget.maxWidgets) {
    throw new Invalid(`A dashboard request computes at most ${budget.maxWidgets} widgets; this one asks for ${wanted.length}. Ask for fewer widget_ids.`);
  }
  const now = new Date();
  // One plan per widget for this request: the cache key, the shared scans and the run all read it.
  const plans = new Map(
    wanted
      .filter((id) => input.manifest.widgetsById.has(id))
      .map((widgetId) => [widgetId, planWidget({ scope: input.scope, viewer: input.viewer, dashboard: input.manifest, widgetId, filterValues: input.filters, now, timeZone: input.timeZone })]),
  );
  const request = { dashboardId: input.dashboardId, version: input.version, warehouseVersion: await currentWarehouseVersion(input.scope.orgId) };
  const keys = new Map([...plans].map(([id, plan]) => [id, widgetResultKey(request, plan)]));
  if (input.refresh) return computeWidgets(input, wanted, plans, keys, request.warehouseVersion, budget);
  const flight = JSON.stringify([budget, wanted.map((id) => keys.get(id) ?? id)]);
  const running = inFlight.get(flight);
  if (running) {
    // Computed once for both: to this caller the answers are as good as cached.
    const shared = await running;
    return Object.fromEntries(Object.entries(shared).map(([id, result]) => [id, result.error ? result : { ...result, cached: true }]));
  }
  const mine = computeWidgets(input, wanted, plans, keys, request.warehouseVersion, budget);
  inFlight.set(flight, mine);
  try {
    return await mine;
  } finally {
    inFlight.delete(flight);
  }
}

async function computeWidgets(
  input: RunInput,
  wanted: string[],
  plans: ReadonlyMap<string, WidgetPlan>,
  keys: ReadonlyMap<string, string>,
  warehouseVersion: string,
  budget: QueryBudget,
): Promise<Record<string, WidgetResult>> {
  const widgets: Record<string, WidgetResult> = {};
  const fresh: [string, WidgetQueryResult][] = [];
  // The clock starts at the first widget (after the transaction is open).
  let started: number | undefined;
  let rowsSoFar = 0;
  let done = 0;
  const budgetTime = budget.maxMs >= 1_000 ? `${Math.round(budget.maxMs / 1000)} s` : `${budget.maxMs} ms`;
  const overBudget = (why: string) =>
    new Unavailable(`This dashboard request ${why} after ${done} of ${wanted.length} widgets and was stopped; nothing was cached. Ask for fewer widgets or narrow the filters.`);
  // Unknown widgets and cache hits are settled first; the rest are computed in one transaction, in request order.
  const plan = wanted.map((widgetId) => {
    if (!input.manifest.widgetsById.has(widgetId)) {
      widgets[widgetId] = { columns: [], rows: [], error: { detail: `No widget '${widgetId}' in this dashboard` }, cached: false, truncated: false };
      return { widgetId, key: "", settled: true };
    }
    const key = keys.get(widgetId)!;
    const hit = input.refresh ? undefined : getCachedResult(key);
    if (hit) widgets[widgetId] = { ...hit, error: null, cached: true };
    return { widgetId, key, settled: hit !== undefined };
  });
  // Rollups the dashboard declares that are built and fresh answer the widgets they cover exactly (lib/rollups);
  // stale ones are refreshed by the worker while the tables answer.
  const pending = plan.some((p) => !p.settled);
  const rollups = pending ? await freshRollups(input.scope, dashboardRollups(input.manifest.datasets.values()), input.timeZone, warehouseVersion) : { fresh: [], stale: [] };
  if (rollups.stale.length > 0) void sendRollupRefresh(input.scope.orgId);
  // Widgets reading the same source under the same conditions share one statement (lib/query/shared-scan.ts).
  const shared = sharedScans(
    plan.filter((p) => !p.settled).map((p) => plans.get(p.widgetId)!),
    rollups.fresh,
  );
  const settle = async ({ widgetId, key, settled }: (typeof plan)[number], runner?: StatementRunner) => {
    started ??= performance.now();
    if (!settled) {
      const remainingMs = budget.maxMs - (performance.now() - started);
      if (remainingMs <= 0) throw overBudget(`ran past its time budget of ${budgetTime}`);
      try {
        const planned = plans.get(widgetId)!;
        const result = await runWidgetQuery({
          ...planned.input,
          rollups: rollups.fresh,
          plan: planned,
          statementTimeoutMs: Math.max(1, Math.min(DEFAULT_STATEMENT_TIMEOUT_MS, Math.ceil(remainingMs))),
          runner,
          shared,
        });
        fresh.push([key, result]);
        widgets[widgetId] = { columns: result.columns, rows: result.rows, error: null, cached: false, truncated: result.truncated, limit: result.limit, source: result.source, restricted: result.restricted };
      } catch (error) {
        if (error instanceof BatchTransactionSpent) throw error;
        // QueryError messages are written for viewers; anything else is ours to log, not to show.
        if (!(error instanceof QueryError)) log.error("widget query failed", { widgetId, error: error instanceof Error ? error.stack : String(error) });
        const detail = error instanceof QueryError ? error.message : "This widget's data could not be computed";
        widgets[widgetId] = { columns: [], rows: [], error: { detail }, cached: false, truncated: false };
      }
    }
    done++;
    if (performance.now() - started > budget.maxMs) throw overBudget(`ran past its time budget of ${budgetTime}`);
    rowsSoFar += widgets[widgetId].rows.length;
    if (rowsSoFar > budget.maxRows) throw overBudget(`returned more than ${budget.maxRows} rows`);
  };
  if (plan.every((p) => p.settled)) for (const p of plan) await settle(p);
  else await runReadOnlyBatch(input.scope, plan, { timeZone: input.timeZone, transactionTimeoutMs: budget.maxMs + 5_000 }, settle);
  for (const [key, result] of fresh) putCachedResult(key, result);
  return Object.fromEntries(wanted.map((widgetId) => [widgetId, widgets[widgetId]]));
}

/**
 * Who is told what when the granted manifest no longer validates: editors its problems (422),
 * signed-in viewers a sentence asking for an editor, embeds and public links only that it is
 * unavailable (both 503: nothing in their request is wrong, and the problems name the SQL).
 */
export type Audience = "editor" | "viewer" | "anonymous";

/** How a granted dashboard is read: its organization's time zone and currency (read once per request), UTC and USD when it has none. */
export async function grantedLocale(granted: GrantedDashboard): Promise<OrgLocale> {
  if (granted.locale) return granted.locale;
  const org = await findOrganization(granted.scope.orgId);
  return { timeZone: org?.timeZone ?? "UTC", currency: org?.currency ?? DEFAULT_CURRENCY };
}

/** The time zone a granted dashboard's dates are read in (grantedLocale's). */
export async function grantedTimeZone(granted: GrantedDashboard): Promise<string> {
  return (await grantedLocale(granted)).timeZone;
}

/** An embed's filters: its locked values win over whatever the page sends. */
export const lockedOver = (locked: Record<string, unknown>, filters: Record<string, unknown>) => ({ ...filters, ...locked });

/**
 * Runs the widgets of a version the policy granted, in the organization's time zone: the one entry for
 * a caller that already holds the grant (a page loader, which granted once to render the page) and for
 * the query operations below, so no request asks the policy twice. `timeZone` is the caller's
 * grantedTimeZone when it has read it already.
 */
export async function queryGranted(
  granted: GrantedDashboard,
  audience: Audience,
  filters: Record<string, unknown>,
  widgetIds: string[] | undefined,
  options: { refresh?: boolean; budget?: QueryBudget; timeZone?: string } = {},
) {
  if (!granted.parsed.ok) {
    if (audience === "editor") throw new Invalid(granted.parsed.errors);
    throw new Unavailable(audience === "viewer" ? UNPASSABLE_TO_VIEWERS : UNAVAILABLE_TO_ANONYMOUS);
  }
  const widgets = await runWidgets({
    scope: granted.scope,
    dashboardId: granted.dashboardId,
    // Every edit bumps the draft revision in the database, so no replica serves an older draft's results.
    version: granted.version === "draft" ? `draft@${granted.draftRevision}` : granted.version,
    viewer: granted.viewer,
    manifest: granted.parsed.value,
    filters,
    widgetIds,
    timeZone: options.timeZone ?? (await grantedTimeZone(granted)),
    refresh: options.refresh,
    budget: options.budget,
  });
  return { dashboard_id: granted.dashboardId, version: granted.version, widgets };
}

/** Who reads a granted dashboard as a signed-in principal: editors are told a broken manifest's problems, viewers not. */
export const audienceOf = (principal: Principal): Audience => (isEditor(principal) ? "editor" : "viewer");

/** The batch query of a dashboard for a signed-in caller: published version by default, the draft for editors. */
export async function queryDashboard(principal: Principal, idOrSlug: string, body: z.output<typeof QueryBody>, budget: QueryBudget = DEFAULT_QUERY_BUDGET) {
  if (body.preview_as !== undefined && !isOrganizationAdmin(principal)) throw forbidden("Only organization admins may preview a dashboard as another role");
  const granted = await grantForPrincipal(principal, idOrSlug, body.version);
  // Preview as (issue 48 §4): the field policies as that role sees them; the admin's own grant and scope otherwise.
  const viewed = body.preview_as === undefined ? granted : { ...granted, viewer: { role: body.preview_as, attributes: {} } };
  return queryGranted(viewed, audienceOf(principal), body.filters, body.widget_ids, { refresh: body.refresh, budget });
}

/** The batch query of an embedded dashboard: the grant's version and scope, with its locked filters winning over the page's values. */
export async function queryEmbedded(grant: EmbedGrant, filters: Record<string, unknown>, widgetIds?: string[]) {
  return queryGranted(await grantForEmbed(grant), "anonymous", lockedOver(grant.lockedFilters, filters), widgetIds);
}

/** The batch query of a public dashboard (platform.public), or 404 when it is not public. */
export async function queryPublic(orgSlug: string, dashboardSlug: string, filters: Record<string, unknown>, widgetIds?: string[]) {
  const granted = await grantForPublic(orgSlug, dashboardSlug);
  if (!granted) throw notFound("Dashboard");
  return queryGranted(granted, "anonymous", filters, widgetIds);
}
