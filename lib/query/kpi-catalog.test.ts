import { describe, expect, it } from "vitest";
import type { TenantScope } from "@/lib/db/tenant";
import { runReadOnly } from "./execute";
import { KPI_CATALOG } from "./kpi-catalog";

/** revenue_vs_target as it was written before: every order grouped by location and month, then joined to the targets. */
const GROUPED_JOIN = `SELECT t.location_id, t.month, t.target_amount, COALESCE(a.amount, 0) AS amount
  FROM sales_targets t
  LEFT JOIN (SELECT location_id, date_trunc('month', order_date)::date AS month, sum(amount) AS amount
             FROM orders GROUP BY 1, 2) a ON a.location_id = t.location_id AND a.month = t.month
  WHERE t.month <= current_date`;

const rowsOf = (scope: TenantScope, query: string, timeZone: string) =>
  runReadOnly(scope, `SELECT row_to_json(_q.*) AS row FROM (SELECT * FROM (${query}) AS s ORDER BY location_id, month) AS _q`, [], { timeZone });

describe("the revenue_vs_target KPI", () => {
  it("sums each target's month of orders exactly as the grouped join did, in every organization, zone and scope", async () => {
    const query = KPI_CATALOG.get("revenue_vs_target")!.dataset.query!;
    for (const [scope, timeZone] of [
      [{ orgId: "org_acme" }, "America/New_York"],
      [{ orgId: "org_acme", locationIds: ["loc_acme_nyc", "loc_acme_sfo"] }, "America/New_York"],
      [{ orgId: "org_globex" }, "Europe/Berlin"],
      [{ orgId: "org_globex" }, "Pacific/Kiritimati"],
    ] as const) {
      const before = await rowsOf(scope, GROUPED_JOIN, timeZone);
      expect(before.length).toBeGreaterThan(20);
      expect(await rowsOf(scope, query, timeZone)).toEqual(before);
    }
  }, 180_000);
});
