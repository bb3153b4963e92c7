import { describe, expect, it } from "vitest";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import { additiveAggregate, dashboardRollups } from "./rollup-definition";

const manifest = (rollups: string, from = "orders JOIN locations ON locations.id = orders.location_id") => `version: "1.0"
kind: dashboard
metadata: { id: d, name: D }
spec:
  datasets:
    - id: sales
      from: ${from}
      dimensions:
        - { id: order_date, column: orders.order_date }
        - { id: location_id, column: orders.location_id }
        - { id: region, column: locations.region }
        - { id: channel, column: orders.channel }
      metrics:
        - { id: revenue, type: sql, expression: sum(orders.amount) }
        - { id: orders, type: sql, expression: count(*) }
        - { id: customers, type: sql, expression: count(DISTINCT orders.customer_id) }
        - { id: average, type: sql, expression: avg(orders.amount) }
        - { id: ratio, type: sql, expression: sum(orders.cost) / sum(orders.amount) }
        - { id: per_order, type: formula, expression: revenue / orders }
      rollups:
${rollups}
`;

function problems(rollups: string, from?: string): string[] {
  const parsed = parseDashboardYaml(manifest(rollups, from));
  return parsed.ok ? [] : parsed.errors.map((e) => `${e.path.join(".")}: ${e.message}`);
}

describe("declaring rollups (save-time validation)", () => {
  it("accepts additive measures over known dimensions, and the engine's definition names expressions", () => {
    const text = manifest("        - { name: daily, time_dimension: order_date, granularity: day, location_dimension: location_id, dimensions: [region, channel], measures: [revenue, orders] }");
    const parsed = parseDashboardYaml(text);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok) return;
    expect(dashboardRollups(parsed.dashboard.datasets.values())).toEqual([
      {
        name: "daily",
        source: "orders JOIN locations ON locations.id = orders.location_id",
        time: { column: "orders.order_date", grain: "day" },
        location: "orders.location_id",
        dimensions: ["locations.region", "orders.channel"],
        measures: [
          { expression: "count(*)", fn: "count" },
          { expression: "sum(orders.amount)", fn: "sum" },
        ],
      },
    ]);
  });

  it("refuses unknown dimensions and measures, distinct counts, averages, ratios and formulas, naming each", () => {
    const found = problems(
      "        - { name: bad, time_dimension: day, granularity: day, location_dimension: location_id, dimensions: [city, revenue], measures: [customers, average, ratio, per_order, margin, channel] }",
    );
    expect(found.join("\n")).toMatch(/time_dimension: unknown dimension 'day'/);
    expect(found.join("\n")).toMatch(/dimensions\.0: unknown dimension 'city'/);
    expect(found.join("\n")).toMatch(/dimensions\.1: unknown dimension 'revenue' \(a metric; list it under measures\)/);
    expect(found.join("\n")).toMatch(/measures\.0: 'customers' \(count\(DISTINCT orders\.customer_id\)\) is not additive/);
    expect(found.join("\n")).toMatch(/measures\.1: 'average' \(avg\(orders\.amount\)\) is not additive/);
    expect(found.join("\n")).toMatch(/measures\.2: 'ratio' .* is not additive/);
    expect(found.join("\n")).toMatch(/measures\.3: 'per_order' is a formula/);
    expect(found.join("\n")).toMatch(/measures\.4: unknown measure 'margin'/);
    expect(found.join("\n")).toMatch(/measures\.5: unknown measure 'channel' \(a dimension; list it under dimensions\)/);
  });

  it("requires a location dimension over location-scoped rows, and one that location scopes test", () => {
    expect(problems("        - { name: nolocation, time_dimension: order_date, granularity: month, measures: [revenue] }").join("\n")).toMatch(/location_dimension/);
    expect(problems("        - { name: wrong, time_dimension: order_date, granularity: month, location_dimension: region, measures: [revenue] }").join("\n")).toMatch(
      /location_dimension: the location dimension must be orders\.location_id/,
    );
  });

  it("reads an aggregate as additive only when one call spans the whole expression", () => {
    expect(additiveAggregate("sum(orders.amount)")).toBe("sum");
    expect(additiveAggregate(" COUNT(*) ")).toBe("count");
    expect(additiveAggregate("max(coalesce(orders.amount, 0))")).toBe("max");
    expect(additiveAggregate("sum(orders.amount) / sum(orders.cost)")).toBeNull();
    expect(additiveAggregate("count(distinct orders.customer_id)")).toBeNull();
    expect(additiveAggregate("avg(orders.amount)")).toBeNull();
    expect(additiveAggregate("sum(orders.amount) FILTER (WHERE orders.channel = 'web')")).toBeNull();
  });
});
