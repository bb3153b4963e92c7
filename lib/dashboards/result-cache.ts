import { todayIn } from "@/lib/query/dates";
import type { WidgetPlan, WidgetQueryResult } from "@/lib/query/run";

/**
 * Short-lived widget results per (org, dashboard, version, widget, everything
 * else the answer depends on), in this process: see widgetResultKey. The version in the key is
 * the published version number or `draft@<revision>`, both read from the
 * database on every request: a publish or an edit on any replica makes every
 * replica's older entries unreachable at once. So is the organization's warehouse version (a
 * write to the demo warehouse or a table load, import or pull bumps it): new rows make older
 * answers unreachable at once, on every replica. Dropping a dashboard's entries
 * on publish, edit or delete only frees this process's memory early.
 */
const TTL_MS = 60_000;
const MAX_ENTRIES = 2_000;

interface Entry {
  expires: number;
  value: WidgetQueryResult;
}

const entries = new Map<string, Entry>();

/** The dashboard version a request reads, as far as its answers depend on it beyond each widget's plan. */
export interface AnswerRequest {
  dashboardId: string;
  /** A published version number, or `draft@<revision>`. */
  version: number | string;
  /** The organization's warehouse change counter when the request began (lib/rollups/registry.ts currentWarehouseVersion). */
  warehouseVersion: string;
}

/**
 * The cache key of one widget's answer: it holds the whole meaning of the request for that
 * widget, so two requests share an entry only when the engine would compute the same answer.
 * That is the organization, dashboard, version and widget; the warehouse's version (the rows it reads); the location scope (order-free); the
 * time zone and the day it is there (demo rows end today, SQL may read current_date); and the
 * filter conditions the engine applies to the widget, read from the widget's plan (lib/query/run.ts
 * WidgetPlan, the one the run then uses): defaults resolved (a cleared filter has no condition, one
 * left out has its default's) and date expressions resolved to concrete days ("last month" names
 * another month once the month changes). Filters that do not affect the widget are not in it (nor a
 * `*` binding on a field the widget does not have: the engine drops it); two spellings of the same
 * range share it. So is what the datasets' field policies decided for the viewer (plan.visibility): viewers
 * whose roles or attributes see the widget's fields differently never share an answer.
 */
export function widgetResultKey(request: AnswerRequest, plan: WidgetPlan): string {
  const { scope, timeZone, now, widgetId } = plan.input;
  const locations = scope.locationIds && scope.locationIds.length > 0 ? [...scope.locationIds].sort() : null;
  const meaning = { locations, timeZone, today: todayIn(now, timeZone), conditions: plan.meaning, visibility: plan.visibility };
  return JSON.stringify([scope.orgId, request.dashboardId, String(request.version), widgetId, request.warehouseVersion, meaning]);
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
