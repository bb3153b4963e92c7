import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import type { TenantScope } from "@/lib/db/tenant";
import type { ParsedDashboard } from "@/lib/manifest/schema";
import { type WidgetQueryResult, planWidget } from "@/lib/query/run";
import { widgetYaml } from "@/test/support/sample-variants";
import { type AnswerRequest, forgetDashboardResults, getCachedResult, putCachedResult, widgetResultKey } from "./result-cache";

const parsed = parseDashboardYaml(fs.readFileSync(path.join(import.meta.dirname, "fixtures/filter-states.yaml"), "utf8"));
if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));

// 03:35 UTC on 26 November is 22:35 on 25 November in New York: "last month" is October there.
const NOW = new Date("2026-11-26T03:35:00Z");
/** A request as the engine receives it: the dashboard version and what each widget's plan is made from. */
type KeyRequest = AnswerRequest & { scope: TenantScope; manifest: ParsedDashboard; filters: Record<string, unknown>; timeZone: string; now: Date };
const keyFor = (request: KeyRequest, widgetId: string) =>
  widgetResultKey(request, planWidget({ scope: request.scope, dashboard: request.manifest, widgetId, filterValues: request.filters, now: request.now, timeZone: request.timeZone }));
const base: Omit<KeyRequest, "filters"> = { scope: { orgId: "org_acme", locationIds: null }, dashboardId: "dsh_states", version: 3, warehouseVersion: "41", manifest: parsed.dashboard, timeZone: "America/New_York", now: NOW };
const keyOf = (filters: Record<string, unknown>, widgetId = "revenue_kpi", overrides: Partial<KeyRequest> = {}) => keyFor({ ...base, filters, ...overrides }, widgetId);

/** States of one filter, each with the name of what it means for revenue_kpi. */
type State = { value: unknown; absent?: true; means: string };
const periodStates: State[] = [
  { value: undefined, absent: true, means: "October" },
  { value: "last month", means: "October" },
  { value: " Last  Month ", means: "October" },
  { value: "2026-10-01 to 2026-10-31", means: "October" },
  { value: null, means: "all dates" },
  { value: "", means: "all dates" },
  { value: [], means: "all dates" },
  { value: "this month", means: "November" },
  { value: "2026-10-01", means: "1 October" },
  { value: "yesterday", means: "24 November" },
  { value: "the day after never", means: "unusable" },
];
const channelStates: State[] = [
  { value: undefined, absent: true, means: "store" },
  { value: "store", means: "store" },
  { value: ["store"], means: "store list" },
  { value: null, means: "every channel" },
  { value: "online", means: "online" },
];

function filtersOf(period: State, channel: State): Record<string, unknown> {
  return { ...(period.absent ? {} : { period: period.value }), ...(channel.absent ? {} : { channel: channel.value }) };
}

describe("the result cache key holds the whole meaning of a request", () => {
  it("gives two filter states one key exactly when they mean the same conditions (every pair of states)", () => {
    const cases = periodStates.flatMap((period) => channelStates.map((channel) => ({ filters: filtersOf(period, channel), means: `${period.means} / ${channel.means}`, key: keyOf(filtersOf(period, channel)) })));
    for (const a of cases) {
      for (const b of cases) {
        const label = `${JSON.stringify(a.filters)} vs ${JSON.stringify(b.filters)}`;
        if (a.means === b.means) expect(a.key, label).toBe(b.key);
        else expect(a.key, label).not.toBe(b.key);
      }
    }
  });

  it("answers null, then {}, then null again, each from its own entry", () => {
    const request = { ...base, dashboardId: "dsh_sequence" };
    const engine = (filters: Record<string, unknown>): WidgetQueryResult => ({
      columns: ["revenue"],
      rows: [{ revenue: Object.hasOwn(filters, "period") && filters.period === null ? "all-time" : "last month" }],
      truncated: false,
    });
    const ask = (filters: Record<string, unknown>) => {
      const key = keyFor({ ...request, filters }, "revenue_kpi");
      const hit = getCachedResult(key, 0);
      if (hit) return { cached: true, revenue: hit.rows[0].revenue };
      const fresh = engine(filters);
      putCachedResult(key, fresh, 0);
      return { cached: false, revenue: fresh.rows[0].revenue };
    };
    expect(ask({ period: null })).toEqual({ cached: false, revenue: "all-time" });
    expect(ask({})).toEqual({ cached: false, revenue: "last month" });
    expect(ask({ period: null })).toEqual({ cached: true, revenue: "all-time" });
    expect(ask({})).toEqual({ cached: true, revenue: "last month" });
    // The default spelled out is the default.
    expect(ask({ period: "last month" })).toEqual({ cached: true, revenue: "last month" });
  });

  it("ignores filters that do not drive the widget, and keys the widgets they do drive", () => {
    expect(keyOf({ shipped: "2026-01-01" })).toBe(keyOf({}));
    expect(keyOf({ shipped: "2026-01-01" }, "by_channel")).not.toBe(keyOf({}, "by_channel"));
    expect(keyOf({ shipped: null }, "by_channel")).toBe(keyOf({}, "by_channel")); // shipped has no default: cleared and default both mean no condition
    // The channel filter drives revenue_kpi only.
    expect(keyOf({ channel: "online" }, "by_channel")).toBe(keyOf({}, "by_channel"));
  });

  it("resolves relative dates at the request's instant: another month is another key, the same day is the same", () => {
    const later = new Date("2026-12-02T15:00:00Z");
    expect(keyOf({}, "revenue_kpi", { now: later })).not.toBe(keyOf({}));
    expect(keyOf({ period: "last month" }, "revenue_kpi", { now: later })).toBe(keyOf({ period: "2026-11-01 to 2026-11-30" }, "revenue_kpi", { now: later }));
    // Later the same New York day: the same answer.
    expect(keyOf({}, "revenue_kpi", { now: new Date("2026-11-25T14:00:00Z") })).toBe(keyOf({}));
    // The next New York day changes even an absolute filter's key (demo rows and current_date move with it).
    expect(keyOf({ period: "2026-10-01" }, "revenue_kpi", { now: new Date("2026-11-26T06:00:00Z") })).not.toBe(keyOf({ period: "2026-10-01" }));
  });

  it("keys the time zone, the location scope (in any order), the version and the warehouse's version", () => {
    // At this instant it is still 31 October in New York and already 1 November in UTC.
    const now = new Date("2026-11-01T02:00:00Z");
    expect(keyOf({}, "revenue_kpi", { now, timeZone: "UTC" })).not.toBe(keyOf({}, "revenue_kpi", { now }));
    expect(keyOf({ period: null }, "revenue_kpi", { timeZone: "Europe/Berlin" })).not.toBe(keyOf({ period: null }));
    const scoped = (locationIds: string[] | null) => keyOf({}, "revenue_kpi", { scope: { orgId: "org_acme", locationIds } });
    expect(scoped(["loc_b", "loc_a"])).toBe(scoped(["loc_a", "loc_b"]));
    expect(scoped([])).toBe(scoped(null));
    expect(scoped(["loc_a"])).not.toBe(scoped(null));
    expect(keyOf({}, "revenue_kpi", { scope: { orgId: "org_globex", locationIds: null } })).not.toBe(keyOf({}));
    expect(keyOf({}, "revenue_kpi", { version: "draft@4" })).not.toBe(keyOf({}));
    // A load, import or write since makes the older answer unreachable.
    expect(keyOf({}, "revenue_kpi", { warehouseVersion: "42" })).not.toBe(keyOf({}));
  });

  it("leaves out a `*` binding on a column an sql widget's statement does not return, and keeps it where the statement may have it", () => {
    const sqlWidget = (id: string, query: string) => widgetYaml(id, `  data: { kind: sql, query: ${JSON.stringify(query)} }`);
    const yaml = fs.readFileSync(path.join(import.meta.dirname, "fixtures/filter-states.yaml"), "utf8").replace("widgets: [period, channel, shipped, revenue_kpi, by_channel]", "widgets: [period, channel, shipped, revenue_kpi, by_channel, all_time, dated, starry, computed]");
    const withSql = parseDashboardYaml(
      yaml +
        sqlWidget("all_time", "SELECT o.channel, count(*) AS orders FROM orders o GROUP BY o.channel") +
        sqlWidget("dated", "SELECT o.order_date, sum(o.amount) AS revenue FROM orders o GROUP BY o.order_date") +
        sqlWidget("starry", "SELECT * FROM orders") +
        sqlWidget("computed", "SELECT date_trunc('day', o.order_date) FROM orders o"),
    );
    if (!withSql.ok) throw new Error(JSON.stringify(withSql.errors));
    const keys = (widgetId: string) => ["last month", "this month", null].map((period) => keyOf({ period }, widgetId, { manifest: withSql.dashboard }));
    // No order_date among its columns: the date filter cannot reach it, so every date state is one answer.
    expect(new Set(keys("all_time")).size).toBe(1);
    // order_date is a column (by reference), or may be (`*`, an unnamed expression): each date state is its own answer.
    for (const widgetId of ["dated", "starry", "computed"]) expect(new Set(keys(widgetId)).size, widgetId).toBe(3);
  });

  it("leaves out a `*` binding on a field a widget's dataset does not have, and keeps it on the fields it has", () => {
    // A dataset of locations (no order_date) beside the fixture's sales: the date filter's `*` cannot reach it.
    const yaml = fs
      .readFileSync(path.join(import.meta.dirname, "fixtures/filter-states.yaml"), "utf8")
      .replace("  tabs:", "    - { id: places, from: locations, dimensions: [{ id: location, column: locations.name }], metrics: [{ id: places, type: sql, expression: count(*) }] }\n  tabs:")
      .replace("widgets: [period, channel, shipped, revenue_kpi, by_channel]", "widgets: [period, channel, shipped, revenue_kpi, by_channel, places]");
    const withPlaces = parseDashboardYaml(yaml + widgetYaml("places", "  data: { kind: dataset, dataset: places, columns: [location, places] }"));
    if (!withPlaces.ok) throw new Error(JSON.stringify(withPlaces.errors));
    const keys = (widgetId: string) => ["last month", "this month", null].map((period) => keyOf({ period }, widgetId, { manifest: withPlaces.dashboard }));
    expect(new Set(keys("places")).size).toBe(1);
    expect(new Set(keys("by_channel")).size).toBe(3);
  });

  it("still drops a dashboard's entries by version", () => {
    const request = { ...base, dashboardId: "dsh_forget", filters: { period: null } };
    const v3 = keyFor(request, "revenue_kpi");
    const draft = keyFor({ ...request, version: "draft@7" }, "revenue_kpi");
    const result: WidgetQueryResult = { columns: ["revenue"], rows: [{ revenue: 1 }], truncated: false };
    putCachedResult(v3, result, 0);
    putCachedResult(draft, result, 0);
    forgetDashboardResults("org_acme", "dsh_forget", "draft");
    expect(getCachedResult(draft, 0)).toBeUndefined();
    expect(getCachedResult(v3, 0)).toBe(result);
    forgetDashboardResults("org_acme", "dsh_forget", 3);
    expect(getCachedResult(v3, 0)).toBeUndefined();
  });
});
