import type { WidgetQueryResult } from "@/lib/query/run";

/**
 * Short-lived widget results per (org, dashboard, version, widget, the filter
 * values that widget depends on), in this process. The version in the key is
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

export function resultKey(orgId: string, dashboardId: string, version: number | string, widgetId: string, filterValues: unknown): string {
  return JSON.stringify([orgId, dashboardId, String(version), widgetId, filterValues]);
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
