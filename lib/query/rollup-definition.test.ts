import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SQL_ALLOW_LIST } from "@/lib/dashboards/manifest";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import { additiveAggregate, dashboardRollups } from "./rollup-definition";
import { rollupScopeProblems } from "./rollup-scope";
import { withOwnTables } from "@/lib/db/own-tables";

/** The server's check on save (lib/dashboards/manifest.ts). */
const SERVER_POLICY = SQL_ALLOW_LIST;

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

describe("rollups that cannot widen a location scope (issue 41 §4: the save-time check on PostgreSQL's parser)", () => {
  /** A dataset over `from` with the given extra dimensions and metrics, and one rollup over them. */
  const scoped = (from: string, rollup: string, dimensions = "", metrics = "") => `version: "1.0"
kind: dashboard
metadata: { id: d, name: D }
spec:
  datasets:
    - id: sales
      from: ${from}
      dimensions:
        - { id: order_date, column: orders.order_date }
        - { id: location_id, column: orders.location_id }
        - { id: channel, column: orders.channel }
${dimensions}
      metrics:
        - { id: revenue, type: sql, expression: sum(orders.amount) }
        - { id: orders, type: sql, expression: count(*) }
${metrics}
      rollups:
        - ${rollup}
`;
  const saved = (text: string) => {
    const parsed = parseDashboardYaml(text, { sqlPolicy: SERVER_POLICY });
    return parsed.ok ? [] : parsed.errors.map((e) => `${e.path.join(".")}: ${e.message}`);
  };

  it("refuses a location dimension over orders CROSS JOIN locations, at the location dimension, saying why", () => {
    const found = saved(
      scoped(
        "orders CROSS JOIN locations",
        "{ name: widened, time_dimension: order_date, granularity: day, location_dimension: location, measures: [revenue, orders] }",
        "        - { id: location, column: locations.id }",
      ),
    );
    expect(found.join("\n")).toMatch(/rollups\.0\.location_dimension: the location dimension 'locations\.id' cannot scope the rollup: orders is not joined to locations on equal locations/);
    // The fact's own location does not make a cross join safe either: each order is counted once per location.
    expect(
      saved(scoped("orders CROSS JOIN locations", "{ name: widened, time_dimension: order_date, granularity: day, location_dimension: location_id, dimensions: [region], measures: [revenue] }", "        - { id: region, column: locations.region }")).join("\n"),
    ).toMatch(/location_dimension: .*locations is not joined to orders on equal locations/);
  });

  it("refuses a dimension that is a scalar subquery over orders", () => {
    const found = saved(
      scoped(
        "orders",
        "{ name: everything, time_dimension: order_date, granularity: day, location_dimension: location_id, dimensions: [total], measures: [revenue] }",
        "        - { id: total, column: \"(SELECT sum(o2.amount) FROM orders AS o2)::text\" }",
      ),
    );
    expect(found.join("\n")).toMatch(/rollups\.0\.dimensions\.0: '\(SELECT sum\(o2\.amount\) FROM orders AS o2\)::text' cannot be held by a rollup: it holds a subquery/);
  });

  it("refuses volatile, set-returning, aggregate and clock functions, unresolved names and functional notation", () => {
    const dimension = (column: string) =>
      saved(scoped("orders", "{ name: r, time_dimension: order_date, granularity: day, location_dimension: location_id, dimensions: [x], measures: [revenue] }", `        - { id: x, column: "${column}" }`)).join("\n");
    expect(dimension("random()::text")).toMatch(/dimensions\.0: .*it calls random/);
    expect(dimension("generate_series(1, 2)")).toMatch(/it calls generate_series/);
    expect(dimension("clock_timestamp()::date")).toMatch(/it calls clock_timestamp/);
    expect(dimension("orders.order_date > CURRENT_DATE")).toMatch(/the clock or the session/);
    expect(dimension("orders.pg_column_size")).toMatch(/'orders\.pg_column_size' is no column of the source's tables/);
    expect(dimension("(orders.channel).length")).toMatch(/functional notation/);
    expect(dimension("orders.ctid::text")).toMatch(/'orders\.ctid' is no column/);
    expect(dimension("orders.channel -- ")).toMatch(/not one expression/);
    const measure = (expression: string) =>
      saved(scoped("orders", "{ name: r, time_dimension: order_date, granularity: day, location_dimension: location_id, measures: [m] }", "", `        - { id: m, type: sql, expression: "${expression}" }`)).join("\n");
    expect(measure("sum((SELECT max(o2.amount) FROM orders AS o2))")).toMatch(/measures\.0: .*it holds a subquery/);
    expect(measure("sum(orders.amount * random())")).toMatch(/it calls random/);
  });

  it("refuses sources that are not warehouse tables joined with ON", () => {
    const source = (from: string) => saved(scoped(from, "{ name: r, time_dimension: order_date, granularity: day, location_dimension: location_id, measures: [revenue] }")).join("\n");
    expect(source("(SELECT * FROM orders) AS orders")).toMatch(/rollups\.0: the source .* cannot be rolled up: it reads a subquery/);
    expect(source("orders JOIN sales_targets USING (location_id)")).toMatch(/write each join's condition with ON/);
    expect(source("orders JOIN locations ON locations.id = orders.location_id AND EXISTS (SELECT 1 FROM orders AS o2)")).toMatch(/it holds a subquery/);
    expect(source("orders JOIN locations ON locations.id = orders.location_id OR TRUE")).toMatch(/locations is not joined to orders/);
    expect(source("orders LEFT JOIN locations ON TRUE")).toMatch(/locations is not joined to orders/);
  });

  it("accepts the sample's sources, inner and outer joins on the location, and ties through a chain", () => {
    const ok = (from: string, location = "location_id", extra = "") =>
      saved(scoped(from, `{ name: r, time_dimension: order_date, granularity: day, location_dimension: ${location}, measures: [revenue, orders] }`, extra));
    expect(ok("orders JOIN locations ON locations.id = orders.location_id JOIN products ON products.id = orders.product_id")).toEqual([]);
    expect(ok("orders LEFT JOIN locations ON orders.location_id = locations.id")).toEqual([]);
    expect(ok("orders JOIN sales_targets ON sales_targets.location_id = orders.location_id JOIN locations ON locations.id = sales_targets.location_id")).toEqual([]);
    // The location dimension on the null side of an outer join could be NULL.
    expect(ok("locations LEFT JOIN orders ON orders.location_id = locations.id").join("\n")).toMatch(/null side of an outer join/);
    // An outer join's condition ties only its null side: locations is not tied to orders by it.
    expect(ok("orders JOIN products ON products.id = orders.product_id RIGHT JOIN locations ON locations.id = orders.location_id").join("\n")).toMatch(/null side/);
  });

  it("reads the sample dashboard's rollups as safe", async () => {
    // The sample reads the demo organizations' own marketing_spend (issue 42), which the check resolves within acme's work.
    const parsed = await withOwnTables("org_acme", async () => parseDashboardYaml(readFileSync("docs/manifests/sample-dashboard.yaml", "utf8"), { sqlPolicy: SERVER_POLICY }));
    expect(parsed.ok ? [] : parsed.errors.map((e) => e.message)).toEqual([]);
    if (parsed.ok) for (const definition of dashboardRollups(parsed.dashboard.datasets.values())) expect(rollupScopeProblems(definition)).toEqual([]);
  });
});
