import "server-only";
import type { z } from "zod";
import { ApiError, notFound, tooManyRequests } from "@/lib/api/errors";
import { checkRateLimit } from "@/lib/api/rate-limit";
import type { Principal } from "@/lib/auth/roles";
import { findOrganization } from "@/lib/auth/directory";
import type { TenantScope } from "@/lib/db/tenant";
import { log } from "@/lib/log";
import { QueryError } from "@/lib/query/errors";
import { runWidgetQuery } from "@/lib/query/run";
import type { QueryBody } from "./contract";
import type { EmbedGrant } from "./embed";
import type { ValidManifest } from "./manifest";
import { grantForEmbed, grantForPrincipal, grantForPublic, type GrantedDashboard } from "./policy";
import { getCachedResult, putCachedResult, resultKey } from "./result-cache";

export interface WidgetResult {
  columns: string[];
  rows: Record<string, unknown>[];
  error: { detail: string } | null;
  cached: boolean;
}

/** Filter widgets whose value changes what `widgetId` shows: bindings that target it (or `*`) and its own `filters` entries. */
export function filtersAffecting(manifest: ValidManifest, widgetId: string): string[] {
  const ids = new Set<string>();
  for (const w of manifest.widgets) {
    if (w.spec.component !== "filter" || w.metadata.id === widgetId) continue;
    if (w.spec.bindings.some((b) => b.target === "*" || b.target === widgetId)) ids.add(w.metadata.id);
  }
  for (const use of manifest.widgetsById.get(widgetId)?.spec.filters ?? []) ids.add(use.filter_id);
  return [...ids].sort();
}

/** Widgets that show data (filters with dataset options included); text, image and markdown carry none. */
function dataWidgets(manifest: ValidManifest): string[] {
  return manifest.widgets.filter((w) => w.spec.data !== undefined).map((w) => w.metadata.id);
}

interface RunInput {
  scope: TenantScope;
  dashboardId: string;
  version: number | "draft";
  manifest: ValidManifest;
  filters: Record<string, unknown>;
  widgetIds?: string[];
  timeZone: string;
  /** Recompute instead of reading the cache (the fresh result still replaces the cached one). */
  refresh?: boolean;
}

/** Forced refreshes skip the cache and cost real queries, so they have their own, tighter limit. */
const REFRESH_LIMIT = { limit: 10, windowSeconds: 60 };

/** Computes (or serves from cache) every requested widget; one widget's failure is its own `error`. */
async function runWidgets(input: RunInput) {
  const wanted = input.widgetIds ?? dataWidgets(input.manifest);
  const widgets: Record<string, WidgetResult> = {};
  const now = new Date();
  for (const widgetId of wanted) {
    if (!input.manifest.widgetsById.has(widgetId)) {
      widgets[widgetId] = { columns: [], rows: [], error: { detail: `No widget '${widgetId}' in this dashboard` }, cached: false };
      continue;
    }
    const relevant = Object.fromEntries(filtersAffecting(input.manifest, widgetId).map((id) => [id, input.filters[id] ?? null]));
    const key = resultKey(input.scope.orgId, input.dashboardId, input.version, widgetId, [input.scope.locationIds ?? null, relevant]);
    const hit = input.refresh ? undefined : getCachedResult(key);
    if (hit) {
      widgets[widgetId] = { ...hit, error: null, cached: true };
      continue;
    }
    try {
      const result = await runWidgetQuery({
        scope: input.scope,
        dashboard: input.manifest,
        widgetId,
        filterValues: input.filters,
        now,
        timeZone: input.timeZone,
      });
      putCachedResult(key, result);
      widgets[widgetId] = { columns: result.columns, rows: result.rows, error: null, cached: false };
    } catch (error) {
      // QueryError messages are written for viewers; anything else is ours to log, not to show.
      if (!(error instanceof QueryError)) log.error("widget query failed", { widgetId, error: error instanceof Error ? error.stack : String(error) });
      const detail = error instanceof QueryError ? error.message : "This widget's data could not be computed";
      widgets[widgetId] = { columns: [], rows: [], error: { detail }, cached: false };
    }
  }
  return widgets;
}

/** Runs the widgets of a version the policy granted, in the organization's time zone. */
async function runGranted(granted: GrantedDashboard, filters: Record<string, unknown>, widgetIds: string[] | undefined, refresh?: boolean) {
  if (!granted.parsed.ok) throw new ApiError(422, granted.parsed.errors);
  const org = await findOrganization(granted.scope.orgId);
  const widgets = await runWidgets({
    scope: granted.scope,
    dashboardId: granted.dashboardId,
    version: granted.version,
    manifest: granted.parsed.value,
    filters,
    widgetIds,
    timeZone: org?.timeZone ?? "UTC",
    refresh,
  });
  return { dashboard_id: granted.dashboardId, version: granted.version, widgets };
}

/** The batch query of a dashboard for a signed-in caller: published version by default, the draft for editors. */
export async function queryDashboard(principal: Principal, idOrSlug: string, body: z.output<typeof QueryBody>) {
  if (body.refresh) {
    const verdict = checkRateLimit(`dashboard refresh ${principal.orgId}:${principal.userId}`, REFRESH_LIMIT.limit, REFRESH_LIMIT.windowSeconds);
    if (!verdict.ok) throw tooManyRequests(verdict.retryAfter);
  }
  return runGranted(await grantForPrincipal(principal, idOrSlug, body.version), body.filters, body.widget_ids, body.refresh);
}

/** The batch query of an embedded dashboard: the grant's version and scope, with its locked filters winning over the page's values. */
export async function queryEmbedded(grant: EmbedGrant, filters: Record<string, unknown>, widgetIds?: string[]) {
  return runGranted(await grantForEmbed(grant), { ...filters, ...grant.lockedFilters }, widgetIds);
}

/** The batch query of a public dashboard (platform.public), or 404 when it is not public. */
export async function queryPublic(orgSlug: string, dashboardSlug: string, filters: Record<string, unknown>, widgetIds?: string[]) {
  const granted = await grantForPublic(orgSlug, dashboardSlug);
  if (!granted) throw notFound("Dashboard");
  return runGranted(granted, filters, widgetIds);
}
