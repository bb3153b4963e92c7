import type { TenantScope } from "@/lib/db/tenant";
import type { ParsedDashboard } from "@/lib/manifest/schema";
import { todayIn } from "@/lib/query/dates";
import { conditionsMeaning } from "@/lib/query/filters";
import { type WidgetQueryResult, widgetFields } from "@/lib/query/run";

/**
 * Short-lived widget results per (org, dashboard, version, widget, everything
 * else the answer depends on), in this process: see widgetResultKey. The version in the key is
 * the published version number or `draft@<revision>`, both read from the
 * database on every request: a publish or an edit on any replica makes every
 * replica's older entries unreachable at once. Dropping a dashboard's entries
 * on publish, edit or delete only frees this process's memory early.
 */
const TTL_MS = 60_000;
const MAX_ENTRIES = 2_000;

interface Entry {
  expires: number;
  value: WidgetQueryResult;
}

const entries = new Map<string, Entry>();

/** One dashboard request, as far as its answers depend on it. */
export interface AnswerRequest {
  scope: TenantScope;
  dashboardId: string;
  /** A published version number, or `draft@<revision>`. */
  version: number | string;
  /** That version's manifest (it fixes datasets, bindings and defaults). */
  manifest: Pick<ParsedDashboard, "widgetsById" | "datasets">;
  /** The request's filter values: absent is the filter's default, null is cleared. */
  filters: Readonly<Record<string, unknown>>;
  timeZone: string;
  /** The instant the request is computed for. */
  now: Date;
}

/**
 * The cache key of one widget's answer: it holds the whole meaning of the request for that
 * widget, so two requests share an entry only when the engine would compute the same answer.
 * That is the organization, dashboard, version and widget; the location scope (order-free); the
 * time zone and the day it is there (demo rows end today, SQL may read current_date); and the
 * filter conditions the engine applies to the widget, with defaults resolved (a cleared filter
 * has no condition, one left out has its default's) and date expressions resolved to concrete
 * days ("last month" names another month once the month changes). Filters that do not affect
 * the widget are not in it (nor a `*` binding on a field the widget does not have, widgetFields:
 * the engine drops it); two spellings of the same range share it.
 */
export function widgetResultKey(request: AnswerRequest, widgetId: string): string {
  const widget = request.manifest.widgetsById.get(widgetId);
  const locations = request.scope.locationIds && request.scope.locationIds.length > 0 ? [...request.scope.locationIds].sort() : null;
  const conditions = widget ? conditionsMeaning(request.manifest.widgetsById.values(), widget, request.filters, { now: request.now, timeZone: request.timeZone }, widgetFields(request.manifest, widget)) : [];
  const meaning = { locations, timeZone: request.timeZone, today: todayIn(request.now, request.timeZone), conditions };
  return JSON.stringify([request.scope.orgId, request.dashboardId, String(request.version), widgetId, meaning]);
}

export function getCachedResult(key: string, now = Date.now()): Entry["value"] | undefined {
  const hit = entries.get(key);
  if (!hit) return undefined;
  if (hit.expires <= now) {
    entries.delete(key);
    return undefined;
  }
  return hit.value;
}

export function putCachedResult(key: string, value: Entry["value"], now = Date.now()) {
  if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
  entries.set(key, { expires: now + TTL_MS, value });
}

/** Drops a dashboard's cached results (all versions, or only `version`). */
export function forgetDashboardResults(orgId: string, dashboardId: string, version?: number | string) {
  const prefix = JSON.stringify([orgId, dashboardId]).slice(0, -1);
  // "draft" drops every draft revision (`draft@<n>`).
  const versionPrefix = version === undefined ? prefix : version === "draft" ? `${prefix},"draft@` : `${prefix},${JSON.stringify(String(version))}`;
  for (const key of entries.keys()) if (key.startsWith(versionPrefix)) entries.delete(key);
}
