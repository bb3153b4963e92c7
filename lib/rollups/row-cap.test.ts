import { beforeAll, describe, expect, it } from "vitest";
import { configSingleton } from "@/lib/config";
import { type TenantScope, withTenant } from "@/lib/db/tenant";
import { dashboardRollups } from "@/lib/query/rollup-definition";
import type { BuiltRollup } from "@/lib/query/rollup-routing";
import { type WidgetOutcome, publishRollups, runWidgets, sampleWithExtras, widgetYaml } from "@/test/support/sample-variants";
import { aggregateStatement, overCapReason, refreshOrganizationRollups } from "./build";
import { freshRollups } from "./registry";

/*
 * A rollup's build never reads an unbounded result (issue 31 §2, docs/rollups.md "Row cap"): with a
 * cap of 1,000 rows, a rollup by customer and day (thousands of groups per organization) is marked
 * failed with the reason and its widget is answered exactly by the tables; a rollup by region and
 * month (about a hundred) still builds and answers.
 */
const MAX_ROWS = 1_000;
process.env.QUARRY_ROLLUP_MAX_ROWS = String(MAX_ROWS);
configSingleton.set(undefined);

const CAPPED = `
    - id: capped
      from: orders JOIN locations ON locations.id = orders.location_id
      dimensions:
        - { id: order_date, column: orders.order_date }
        - { id: location_id, column: orders.location_id }
        - { id: region, column: locations.region }
        - { id: customer_id, column: orders.customer_id }
      metrics:
        - { id: revenue, type: sql, expression: sum(orders.amount) }
        - { id: orders, type: sql, expression: count(*) }
      rollups:
        - { name: revenue_by_customer_day, time_dimension: order_date, granularity: day, location_dimension: location_id, dimensions: [customer_id], measures: [revenue, orders] }
        - { name: revenue_by_region_month, time_dimension: order_date, granularity: month, location_dimension: location_id, dimensions: [region], measures: [revenue, orders] }`;

const WIDGETS = [
  widgetYaml("by_customer", "  data: { kind: dataset, dataset: capped, columns: [customer_id, orders, revenue] }"),
  widgetYaml("by_region", "  data: { kind: dataset, dataset: capped, columns: [region, orders, revenue] }"),
].join("");

const dashboard = sampleWithExtras(CAPPED, WIDGETS);
const definitions = dashboardRollups([dashboard.datasets.get("capped")!]);
const ZONES: Record<string, string> = { org_acme: "America/New_York", org_globex: "Europe/Berlin" };
const now = new Date();

async function run(scope: TenantScope, filterValues: Record<string, unknown>, rollups: readonly BuiltRollup[] | undefined) {
  return runWidgets({ scope, dashboard, filterValues, now, timeZone: ZONES[scope.orgId], rollups }, ["by_customer", "by_region"]);
}

const withoutSource = (outcome: WidgetOutcome) => ("error" in outcome ? outcome : { ...outcome, source: undefined });
const sourceOf = (outcome: WidgetOutcome) => ("error" in outcome ? null : outcome.source);

beforeAll(async () => {
  for (const orgId of Object.keys(ZONES)) await publishRollups(orgId, definitions);
}, 60_000);

describe("the rollup row cap", () => {
  it("reads at most cap + 1 rows of an aggregate", () => {
    const statement = aggregateStatement(definitions[0], MAX_ROWS);
    expect(statement.text).toMatch(/\nLIMIT \$\d+::int\n/);
    expect(statement.values.at(-1)).toBe(MAX_ROWS + 1);
  });

  for (const orgId of Object.keys(ZONES)) {
    it(`marks a rollup over the cap failed with the reason, builds the one under it, and the tables answer exactly (${orgId})`, async () => {
      const outcomes = Object.fromEntries((await refreshOrganizationRollups(orgId)).map((o) => [o.name, o]));
      expect(outcomes.revenue_by_customer_day).toMatchObject({ state: "failed", error: overCapReason(MAX_ROWS), rows: 0 });
      expect(overCapReason(MAX_ROWS)).toBe("the aggregate has more than 1000 rows: declare fewer or coarser dimensions");
      expect(outcomes.revenue_by_region_month.state).toBe("ready");
      expect(outcomes.revenue_by_region_month.rows).toBeGreaterThan(0);
      expect(outcomes.revenue_by_region_month.rows).toBeLessThanOrEqual(MAX_ROWS);

      // The registry's status says so; nothing of the failed one was written.
      const states = await withTenant({ orgId }, (tx) =>
        tx.$queryRaw<{ name: string; state: string; error: string | null; rows: number }[]>`
          SELECT name, state, error, (SELECT count(*)::int FROM rollup_rows WHERE rollup_id = rollups.id) AS rows FROM rollups ORDER BY name`,
      );
      expect(states).toEqual([
        { name: "revenue_by_customer_day", state: "failed", error: overCapReason(MAX_ROWS), rows: 0 },
        { name: "revenue_by_region_month", state: "ready", error: null, rows: outcomes.revenue_by_region_month.rows },
      ]);

      // Only the built one answers; a failed rollup at the warehouse's version is not sent back to the worker.
      const { fresh, stale } = await freshRollups({ orgId }, definitions, ZONES[orgId]);
      expect(fresh.map((r) => r.name)).toEqual(["revenue_by_region_month"]);
      expect(stale).toEqual([]);
      // A refresh reads a failed rollup again (bounded all the same), so a raised cap is taken at the next one.
      expect((await refreshOrganizationRollups(orgId)).map((o) => o.state).sort()).toEqual(["failed", "skipped"]);

      for (const filters of [{}, { date: "this year" }, { date: null }]) {
        const tables = await run({ orgId }, filters, undefined);
        const routed = await run({ orgId }, filters, fresh);
        expect(sourceOf(routed.by_customer), JSON.stringify(filters)).toEqual({ kind: "base" });
        expect(sourceOf(routed.by_region), JSON.stringify(filters)).toEqual({ kind: "rollup", name: "revenue_by_region_month" });
        expect(withoutSource(routed.by_customer)).toEqual(withoutSource(tables.by_customer));
        expect(withoutSource(routed.by_region)).toEqual(withoutSource(tables.by_region));
        expect("error" in routed.by_customer ? routed.by_customer.error : routed.by_customer.rows.length).toBeGreaterThan(0);
      }
    }, 180_000);
  }
});
