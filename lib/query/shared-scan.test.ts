import { describe, expect, it } from "vitest";
import type { TenantScope } from "@/lib/db/tenant";
import type { ParsedDashboard } from "@/lib/manifest/schema";
import { filterYaml, runWidgets, sampleWithExtras, seededRandom, widgetYaml } from "@/test/support/sample-variants";
import { type WidgetQueryResult, runWidgetQuery, planWidget, sharedScans } from "./run";

/**
 * The sample dashboard plus a dataset of non-additive measures (distinct counts, averages, a ratio of
 * sums), an ordered and limited one, and filters with every operator family on other fields, so the
 * shared scans meet what the issue asks them to keep exact.
 */
const EXTRAS = `
    - id: extras
      from: orders JOIN locations ON locations.id = orders.location_id JOIN products ON products.id = orders.product_id
      dimensions:
        - { id: order_date, column: orders.order_date }
        - { id: month, column: "to_char(orders.order_date, 'YYYY-MM')" }
        - { id: location_id, column: orders.location_id }
        - { id: location, column: locations.name }
        - { id: region, column: locations.region }
        - { id: channel, column: orders.channel }
        - { id: category, column: products.category }
        - { id: quantity, column: orders.quantity }
      metrics:
        - { id: customers, type: sql, expression: count(DISTINCT orders.customer_id) }
        - { id: avg_amount, type: sql, expression: "round(avg(orders.amount), 4)" }
        - { id: margin_ratio, type: sql, expression: "round(sum(orders.amount - orders.cost) / nullif(sum(orders.amount), 0), 6)" }
        - { id: revenue, type: sql, expression: sum(orders.amount) }
        - { id: units, type: sql, expression: sum(orders.quantity) }
        - { id: per_customer, type: formula, expression: "round(revenue / customers, 2) if customers > 0 else null" }
    - id: latest_months
      from: orders JOIN locations ON locations.id = orders.location_id JOIN products ON products.id = orders.product_id
      dimensions:
        - { id: month, column: "to_char(orders.order_date, 'YYYY-MM')" }
        - { id: order_date, column: orders.order_date }
        - { id: location_id, column: orders.location_id }
        - { id: channel, column: orders.channel }
        - { id: category, column: products.category }
      metrics:
        - { id: customers, type: sql, expression: count(DISTINCT orders.customer_id) }
        - { id: orders, type: sql, expression: count(*) }
      order_by: [{ column: month, dir: desc }]
      limit: 7`;

const EXTRA_WIDGETS = [
  widgetYaml("x_month_customers", "  data: { kind: dataset, dataset: latest_months, columns: [month, customers, orders] }"),
  widgetYaml("x_latest_total", "  data: { kind: dataset, dataset: latest_months, columns: [customers] }"),
  widgetYaml("x_channel", "  data: { kind: dataset, dataset: extras, columns: [channel, customers, avg_amount, margin_ratio] }"),
  widgetYaml("x_category", "  data: { kind: dataset, dataset: extras, columns: [category, units, revenue, per_customer] }"),
  widgetYaml("x_region_location", "  data: { kind: dataset, dataset: extras, columns: [region, location, customers] }"),
  widgetYaml("x_location_region", "  data: { kind: dataset, dataset: extras, columns: [location, region, avg_amount] }"),
  widgetYaml("x_total", "  data: { kind: dataset, dataset: extras, columns: [customers, margin_ratio, per_customer] }"),
  widgetYaml("x_quantity", "  data: { kind: dataset, dataset: extras, columns: [quantity, revenue, customers] }"),
  widgetYaml("x_day", "  data: { kind: dataset, dataset: extras, columns: [order_date, channel, customers] }"),
  widgetYaml("x_channel_required", "  data: { kind: dataset, dataset: extras, columns: [channel, revenue] }\n  filters: [{ filter_id: region_filter, field: region, operator: eq }]"),
  widgetYaml("x_kpi_margin", "  data: { kind: kpi, kpi: gross_margin, columns: [value, revenue, cost] }"),
  widgetYaml("x_kpi_avg", "  data: { kind: kpi, kpi: avg_order_value, columns: [value] }"),
  filterYaml("channel_filter", "channel", "in"),
  filterYaml("category_filter", "category", "contains"),
  filterYaml("quantity_filter", "quantity", "gte"),
  filterYaml("region_filter", "region", "eq"),
  filterYaml("units_filter", "units", "gt"),
].join("");

function testDashboard(edit?: (yaml: string) => string): ParsedDashboard {
  return sampleWithExtras(EXTRAS, EXTRA_WIDGETS, edit);
}

const dashboard = testDashboard();
const dataWidgets = dashboard.widgets.filter((w) => w.spec.data).map((w) => w.metadata.id);
const now = new Date("2026-11-22T12:00:00Z");
const timeZone = "America/New_York";

const ACME_LOCATIONS = ["loc_acme_nyc", "loc_acme_bos", "loc_acme_chi", "loc_acme_aus", "loc_acme_sfo"];

function randomCase(next: () => number) {
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)];
  const subset = <T,>(xs: readonly T[]) => xs.filter(() => next() < 0.5);
  const day = (from: number, span: number) => new Date(Date.UTC(2024, 11, 1) + Math.floor(from + next() * span) * 86_400_000).toISOString().slice(0, 10);
  const filters: Record<string, unknown> = {};
  const maybe = (id: string, value: () => unknown) => {
    const r = next();
    if (r < 0.4) return; // left out: the filter's default
    filters[id] = r < 0.5 ? null : value();
  };
  maybe("date", () => pick([`${day(0, 300)} to ${day(300, 400)}`, `after ${day(0, 700)}`, `before ${day(30, 700)}`, day(0, 720), "last month", "this week", "30 days ago", "yesterday"]));
  maybe("location_filter", () => subset([...ACME_LOCATIONS, "loc_globex_ber"]));
  maybe("channel_filter", () => (next() < 0.3 ? pick(["online", "store", "partner"]) : subset(["online", "store", "partner"])));
  maybe("category_filter", () => pick(["o", "Coffee", "ACC", "ice", "zz"]));
  maybe("quantity_filter", () => 1 + Math.floor(next() * 4));
  maybe("region_filter", () => pick(["East", "Central", "West", "North"]));
  maybe("units_filter", () => Math.floor(next() * 400));
  const scope: TenantScope = pick([{ orgId: "org_acme" }, { orgId: "org_acme", locationIds: subset(ACME_LOCATIONS).slice(0, 3) }, { orgId: "org_acme", locationIds: ["loc_acme_sfo"] }, { orgId: "org_globex" }]);
  return { filters, scope };
}

/** Every data widget in one batch transaction, as the dashboard endpoint runs them, with or without shared scans; counts statements. */
async function runAll(scope: TenantScope, filterValues: Record<string, unknown>, share: boolean) {
  const base = { scope, dashboard, filterValues, now, timeZone };
  const shared = share ? sharedScans(dataWidgets.map((widgetId) => planWidget({ ...base, widgetId }))) : undefined;
  let statements = 0;
  const outcomes = await runWidgets({ ...base, shared }, dataWidgets, (runner) => (text, values, ms) => {
    statements++;
    return runner(text, values, ms);
  });
  return { outcomes, statements };
}

describe("shared scans", () => {
  it("answer the sample dashboard's warehouse widgets from one statement per source and filter set", async () => {
    const alone = await runAll({ orgId: "org_acme" }, {}, false);
    const together = await runAll({ orgId: "org_acme" }, {}, true);
    expect(together.outcomes).toEqual(alone.outcomes);
    // Shared: the 18 widgets over orders ⨝ locations ⨝ products (datasets sales, extras and latest_months: the
    // same source and conditions) in one statement, the 5 KPIs over orders (revenue, orders, gross_margin twice,
    // avg_order_value) in another; the location options, the target KPI (a source of its own), the order grid
    // (rows, no aggregate) and the sql widget as before.
    expect(alone.statements - together.statements).toBe(17 + 4);
  });

  it("give every widget exactly what it gets alone, on random filter sets and location scopes (seeded)", async () => {
    const next = seededRandom(31);
    for (let iteration = 0; iteration < 32; iteration++) {
      const { filters, scope } = randomCase(next);
      const alone = await runAll(scope, filters, false);
      const together = await runAll(scope, filters, true);
      for (const id of dataWidgets) expect(together.outcomes[id], `iteration ${iteration}, widget ${id}, ${JSON.stringify({ filters, scope })}`).toEqual(alone.outcomes[id]);
      expect(together.statements).toBeLessThan(alone.statements);
    }
  }, 600_000);

  it("a shared statement that fails leaves each widget of its group to run alone: its own error, the others' answers", async () => {
    const broken = testDashboard((yaml) =>
      yaml
        .replace("- { id: units, type: sql, expression: sum(orders.quantity) }", "- { id: units, type: sql, expression: sum(orders.quantity) }\n        - { id: broken, type: sql, expression: sum(orders.amount) / 0 }")
        .replace("columns: [customers, margin_ratio, per_customer]", "columns: [customers, broken]"),
    );
    const scope = { orgId: "org_acme" };
    const base = { scope, dashboard: broken, filterValues: {}, now, timeZone };
    const ids = ["x_channel", "x_total", "x_category"];
    const shared = sharedScans(ids.map((widgetId) => planWidget({ ...base, widgetId })));
    expect(shared.statements).toHaveLength(1);
    const outcomes = await runWidgets({ ...base, shared }, ids);
    expect(outcomes.x_total).toEqual({ error: expect.stringMatching(/division by zero/) });
    expect(outcomes.x_channel).toEqual(await runWidgetQuery({ ...base, widgetId: "x_channel" }));
    expect(outcomes.x_category).toEqual(await runWidgetQuery({ ...base, widgetId: "x_category" }));
  });

  it("another organization's rows and locations outside the scope are in no shared answer", async () => {
    const scoped = await runAll({ orgId: "org_acme", locationIds: ["loc_acme_nyc"] }, { date: null }, true);
    const locations = (scoped.outcomes.revenue_by_location as WidgetQueryResult).rows.map((r) => r.location);
    expect(locations).toEqual(["Manhattan Flagship"]);
    const globex = await runAll({ orgId: "org_globex" }, { date: null }, true);
    const names = (globex.outcomes.x_region_location as WidgetQueryResult).rows.map((r) => r.location);
    expect(names.length).toBe(4);
    expect(names.every((n) => ["Berlin Mitte", "Hamburg Hafen", "Munich Altstadt", "Vienna Ring"].includes(n as string))).toBe(true);
  });
});
