import { beforeAll, describe, expect, it } from "vitest";
import { type TenantScope, withTenant } from "@/lib/db/tenant";
import { runReadOnly } from "@/lib/query/execute";
import { dashboardRollups } from "@/lib/query/rollup-definition";
import type { BuiltRollup } from "@/lib/query/rollup-routing";
import { planWidget, sharedScans } from "@/lib/query/run";
import { type WidgetOutcome, filterYaml, publishRollups, runWidgets, sampleWithExtras, seededRandom, widgetYaml } from "@/test/support/sample-variants";
import { refreshOrganizationRollups } from "./build";
import { currentWarehouseVersion, freshRollups } from "./registry";

/**
 * Exactness of rollups (issue 31 §2): every data widget of the sample dashboard, plus filters with
 * every operator and a month-grain rollup, answered from rollups and from the tables must be equal,
 * widget by widget, under location scopes and for both organizations; an incremental refresh after
 * writes to one day equals a full rebuild; no organization reads another's rollup rows.
 */

const MONTHLY = `
    - id: monthly
      from: orders JOIN locations ON locations.id = orders.location_id
      dimensions:
        - { id: order_date, column: orders.order_date }
        - { id: month, column: "to_char(date_trunc('month', orders.order_date), 'YYYY-MM')" }
        - { id: location_id, column: orders.location_id }
        - { id: region, column: locations.region }
        - { id: channel, column: orders.channel }
        - { id: quantity, column: orders.quantity }
      metrics:
        - { id: revenue, type: sql, expression: sum(orders.amount) }
        - { id: units, type: sql, expression: sum(orders.quantity) }
        - { id: biggest, type: sql, expression: max(orders.amount) }
        - { id: smallest, type: sql, expression: min(orders.amount) }
        - { id: customers, type: sql, expression: count(DISTINCT orders.customer_id) }
        - { id: per_unit, type: formula, expression: "round(revenue / units, 4)" }
      rollups:
        - { name: monthly_region, time_dimension: order_date, granularity: month, location_dimension: location_id, dimensions: [month, region, channel], measures: [revenue, units, biggest, smallest] }`;

const EXTRA_WIDGETS = [
  widgetYaml("m_month_region", "  data: { kind: dataset, dataset: monthly, columns: [month, region, revenue, units, per_unit, biggest, smallest] }"),
  widgetYaml("m_channel", "  data: { kind: dataset, dataset: monthly, columns: [channel, revenue] }"),
  // Distinct counts and finer dimensions fall through to the tables.
  widgetYaml("m_customers", "  data: { kind: dataset, dataset: monthly, columns: [month, customers] }"),
  widgetYaml("m_quantity", "  data: { kind: dataset, dataset: monthly, columns: [quantity, revenue] }"),
  filterYaml("channel_eq", "channel", "eq"),
  filterYaml("channel_in", "channel", "in"),
  filterYaml("category_contains", "category", "contains"),
  filterYaml("region_eq", "region", "eq"),
  filterYaml("month_lt", "month", "lt"),
  filterYaml("month_gte", "month", "gte"),
  filterYaml("month_lte", "month", "lte"),
  filterYaml("orders_gt", "orders", "gt"),
  filterYaml("date_between", "order_date", "between"),
].join("");

const dashboard = sampleWithExtras(MONTHLY, EXTRA_WIDGETS);
const definitions = dashboardRollups(dashboard.datasets.values());
const dataWidgets = dashboard.widgets.filter((w) => w.spec.data).map((w) => w.metadata.id);
const now = new Date();
const ZONES: Record<string, string> = { org_acme: "America/New_York", org_globex: "Europe/Berlin" };
const ACME_LOCATIONS = ["loc_acme_nyc", "loc_acme_bos", "loc_acme_chi", "loc_acme_aus", "loc_acme_sfo"];
/** What the sample's rollups answer with no filters set (the date filter's default, last month). */
const ROLLUP_WIDGETS = ["revenue_kpi", "orders_kpi", "margin_kpi", "revenue_trend", "revenue_by_location", "channel_mix", "margin_gauge", "weekday_heatmap", "category_radar", "order_scatter", "location_table"];

/** Every data widget in one batch with shared scans, as the dashboard endpoint runs them; with `rollups` or from the tables. */
async function runAll(scope: TenantScope, filterValues: Record<string, unknown>, rollups: readonly BuiltRollup[] | undefined) {
  const base = { scope, dashboard, filterValues, now, timeZone: ZONES[scope.orgId], rollups };
  return runWidgets({ ...base, shared: sharedScans(dataWidgets.map((widgetId) => planWidget({ ...base, widgetId })), base.rollups) }, dataWidgets);
}

const withoutSource = (outcome: WidgetOutcome) => ("error" in outcome ? outcome : { ...outcome, source: undefined });
const sourceOf = (outcome: WidgetOutcome) => ("error" in outcome ? null : outcome.source?.kind === "rollup" ? outcome.source.name : (outcome.source?.kind ?? null));

async function fresh(orgId: string): Promise<BuiltRollup[]> {
  return (await freshRollups({ orgId }, definitions, ZONES[orgId])).fresh;
}

/** Compares every widget from rollups with the tables' answer; returns which widgets a rollup answered. */
async function expectExact(scope: TenantScope, filters: Record<string, unknown>, label: string): Promise<string[]> {
  const rollups = await fresh(scope.orgId);
  expect(rollups.length, label).toBe(definitions.length);
  const tables = await runAll(scope, filters, undefined);
  const routed = await runAll(scope, filters, rollups);
  for (const id of dataWidgets) expect(withoutSource(routed[id]), `${label}, widget ${id}`).toEqual(withoutSource(tables[id]));
  return dataWidgets.filter((id) => sourceOf(routed[id]) !== "base" && sourceOf(routed[id]) !== null);
}

function randomCase(next: () => number) {
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)];
  const subset = <T,>(xs: readonly T[]) => xs.filter(() => next() < 0.5);
  const day = (from: number, span: number) => new Date(now.getTime() - Math.floor(from + next() * span) * 86_400_000).toISOString().slice(0, 10);
  const month = () => day(0, 700).slice(0, 7);
  const filters: Record<string, unknown> = {};
  const maybe = (id: string, chance: number, value: () => unknown) => {
    if (next() < chance) filters[id] = value();
  };
  filters.date = next() < 0.2 ? null : pick([`${day(300, 400)} to ${day(0, 300)}`, `after ${day(0, 700)}`, `before ${day(30, 700)}`, day(0, 700), "last month", "this year", "last 7 days", "this month", "yesterday"]);
  maybe("location_filter", 0.4, () => subset([...ACME_LOCATIONS, "loc_globex_ber"]));
  maybe("channel_eq", 0.15, () => pick(["online", "store", "partner"]));
  maybe("channel_in", 0.25, () => subset(["online", "store", "partner"]));
  maybe("category_contains", 0.2, () => pick(["o", "Coffee", "ACC", "ice", "zz"]));
  maybe("region_eq", 0.2, () => pick(["East", "Central", "West", "North"]));
  maybe("month_lt", 0.15, month);
  maybe("month_gte", 0.15, month);
  maybe("month_lte", 0.15, month);
  maybe("orders_gt", 0.2, () => Math.floor(next() * 300));
  maybe("date_between", 0.2, () => ({ from: day(200, 300), to: day(0, 200) }));
  const scope: TenantScope = pick([
    { orgId: "org_acme" },
    { orgId: "org_acme", locationIds: ACME_LOCATIONS.slice(0, 3) },
    { orgId: "org_acme", locationIds: ["loc_acme_sfo"] },
    { orgId: "org_globex" },
    { orgId: "org_globex", locationIds: ["loc_globex_vie"] },
  ]);
  return { filters, scope };
}

beforeAll(async () => {
  for (const orgId of Object.keys(ZONES)) {
    await publishRollups(orgId, definitions);
    const outcomes = await refreshOrganizationRollups(orgId);
    expect(outcomes.map((o) => [o.name, o.state, o.error]).sort()).toEqual(definitions.map((d) => [d.name, "ready", undefined]).sort());
  }
}, 300_000);

describe("rollups", () => {
  it("answer the sample dashboard's aggregate widgets with exactly the tables' rows, and say so", async () => {
    const answered = await expectExact({ orgId: "org_acme" }, {}, "defaults");
    expect(answered).toEqual(expect.arrayContaining(ROLLUP_WIDGETS));
    expect(answered).toEqual(expect.arrayContaining(["m_month_region", "m_channel"]));
    // A distinct count and a dimension no rollup keeps: the tables.
    expect(answered).not.toContain("m_customers");
    expect(answered).not.toContain("m_quantity");
    const rollups = await fresh("org_acme");
    const tables = await runAll({ orgId: "org_acme" }, {}, undefined);
    const routed = await runAll({ orgId: "org_acme" }, {}, rollups);
    // The smallest rollup that covers a widget answers it.
    expect(sourceOf(routed.revenue_by_location)).toBe("sales_by_location_day");
    expect(sourceOf(routed.channel_mix)).toBe("sales_by_channel_category_day");
    expect(sourceOf(routed.revenue_kpi)).toBe("orders_by_day");
    expect(sourceOf(tables.revenue_kpi)).toBe("base");
    expect(sourceOf(routed.order_grid)).toBe("base");
  });

  it("are exact widget by widget on random filter sets (every operator), location scopes and both organizations (seeded)", async () => {
    const next = seededRandom(312);
    let routedWidgets = 0;
    for (let iteration = 0; iteration < 24; iteration++) {
      const { filters, scope } = randomCase(next);
      routedWidgets += (await expectExact(scope, filters, `iteration ${iteration}, ${JSON.stringify({ filters, scope })}`)).length;
    }
    expect(routedWidgets).toBeGreaterThan(24 * 3);
  }, 900_000);

  it("a month-grain rollup answers whole months and leaves a date range cutting a month to the tables", async () => {
    const rollups = await fresh("org_acme");
    const scope = { orgId: "org_acme" };
    const wholeMonths = await runAll(scope, { date: "last month" }, rollups);
    expect(sourceOf(wholeMonths.m_month_region)).toBe("monthly_region");
    const days = await runAll(scope, { date: "last 7 days" }, rollups);
    expect(sourceOf(days.m_month_region)).toBe("base");
    expect(sourceOf(days.revenue_trend)).toBe("sales_by_location_day");
  });

  it("stop answering once the warehouse changes; an incremental refresh rewrites only the changed days and equals a full rebuild", async () => {
    const orgId = "org_acme";
    const before = await currentWarehouseVersion(orgId);
    const [{ day, other }] = await withTenant({ orgId }, (tx) =>
      tx.$queryRaw<{ day: string; other: string }[]>`SELECT (max(order_date) - 3)::text AS day, (max(order_date) - 5)::text AS other FROM orders`,
    );
    await withTenant({ orgId }, async (tx) => {
      await tx.$executeRaw`INSERT INTO orders (id, org_id, order_date, location_id, product_id, channel, customer_id, quantity, amount, cost)
                           VALUES (1900000001, ${orgId}, ${day}::date, 'loc_acme_nyc', 'prd_acme_1', 'online', 7, 2, 123.45, 60.10),
                                  (1900000002, ${orgId}, ${day}::date, 'loc_acme_sfo', 'prd_acme_4', 'store', 8, 1, 0.05, 0.01)`;
      // Another day: one order changes channel (same location, same sums): only the channel rollup's day changes.
      await tx.$executeRaw`UPDATE orders SET channel = CASE channel WHEN 'online' THEN 'store' ELSE 'online' END
                           WHERE id = (SELECT min(id) FROM orders WHERE order_date = ${other}::date)`;
    });
    const afterWrite = await freshRollups({ orgId }, definitions, ZONES[orgId]);
    expect(afterWrite.fresh).toEqual([]);
    expect(afterWrite.stale.length).toBe(definitions.length);
    // A request keyed by the version it read before the write is answered at that version (its cached answer matches its key).
    expect((await freshRollups({ orgId }, definitions, ZONES[orgId], before)).fresh.length).toBe(definitions.length);

    const outcomes = Object.fromEntries((await refreshOrganizationRollups(orgId)).map((o) => [o.name, o]));
    // Nothing changed since: a second refresh reads nothing.
    expect((await refreshOrganizationRollups(orgId)).map((o) => o.state)).toEqual(definitions.map(() => "skipped"));
    expect(outcomes.sales_by_location_day.bucketsWritten).toBe(1);
    expect(outcomes.sales_by_channel_category_day.bucketsWritten).toBe(2);
    expect(outcomes.orders_by_day.bucketsWritten).toBe(2);
    // The month of both days (one bucket, or two when the days straddle a month's start).
    expect(outcomes.monthly_region.bucketsWritten).toBeGreaterThanOrEqual(1);
    expect(outcomes.monthly_region.bucketsWritten).toBeLessThanOrEqual(2);

    const snapshot = () =>
      withTenant({ orgId }, (tx) =>
        tx.$queryRaw<{ rollup_id: string; location_id: string | null; bucket: string; key: string; measures: string }[]>`
          SELECT rollup_id, location_id, bucket::text, key::text, measures::text FROM rollup_rows ORDER BY 1, 2, 3, 4`,
      );
    const incremental = await snapshot();
    // A full rebuild: nothing stored, every rollup pending again.
    await withTenant({ orgId }, async (tx) => {
      await tx.$executeRaw`DELETE FROM rollup_days`;
      await tx.$executeRaw`DELETE FROM rollup_rows`;
      await tx.$executeRaw`UPDATE rollups SET state = 'pending'`;
    });
    const rebuilt = await refreshOrganizationRollups(orgId);
    expect(rebuilt.every((o) => o.state === "ready" && o.bucketsWritten === o.buckets)).toBe(true);
    expect(await snapshot()).toEqual(incremental);

    await expectExact({ orgId }, { date: `${other} to ${day}` }, "after the writes");
    await expectExact({ orgId, locationIds: ["loc_acme_sfo"] }, { date: "this year" }, "after the writes, scoped");
  }, 300_000);

  it("another organization and locations outside the scope read none of the rollup rows", async () => {
    const count = (scope: TenantScope) =>
      runReadOnly(scope, "SELECT row_to_json(_q.*) AS row FROM (SELECT org_id, location_id, count(*)::int AS n FROM rollup_rows GROUP BY 1, 2 ORDER BY 1, 2) AS _q", [], { timeZone: "UTC" });
    const globex = await count({ orgId: "org_globex" });
    expect(globex.length).toBeGreaterThan(0);
    expect(globex.every((r) => r.org_id === "org_globex")).toBe(true);
    const scoped = await count({ orgId: "org_acme", locationIds: ["loc_acme_nyc", "loc_acme_bos"] });
    expect(new Set(scoped.map((r) => r.location_id))).toEqual(new Set(["loc_acme_nyc", "loc_acme_bos"]));
    // The registry too: the same definitions are one row per organization, each seen only by its own.
    const registry = await withTenant({ orgId: "org_globex" }, (tx) => tx.$queryRaw<{ org_id: string }[]>`SELECT DISTINCT org_id FROM rollups`);
    expect(registry).toEqual([{ org_id: "org_globex" }]);
  });
});
