import { describe, expect, it } from "vitest";
import { getDb } from "./client";
import { withTenant } from "./tenant";

// Migration 0010: the tenant functions are called as scalar subqueries, so PostgreSQL evaluates
// them once per statement (an InitPlan) instead of once for every row a policy filters.
describe("row-level security policies cost one call per statement", () => {
  it("no policy calls a tenant function bare (per row)", async () => {
    const { system } = await getDb();
    const policies = await system.query<{ tablename: string; policyname: string; qual: string | null; with_check: string | null }>(
      "SELECT tablename, policyname, qual, with_check FROM pg_policies WHERE schemaname = current_schema()",
    );
    const callers = policies.filter((p) => /quarry_(current_org|location_scope)\(\)/.test(`${p.qual} ${p.with_check}`));
    expect(callers.length).toBeGreaterThan(10);
    const bare = callers.filter((p) => /(?<!SELECT )quarry_(current_org|location_scope)\(\)/.test(`${p.qual} ${p.with_check}`));
    expect(bare.map((p) => `${p.tablename}.${p.policyname}`)).toEqual([]);
  });

  it("EXPLAIN of a tenant aggregate shows InitPlans and a constant comparison, not per-row calls", async () => {
    const plan = await withTenant({ orgId: "org_acme", locationIds: ["loc_acme_nyc"] }, async (tx) => {
      const rows = await tx.$queryRawUnsafe<{ "QUERY PLAN": string }[]>("EXPLAIN (VERBOSE, COSTS OFF) SELECT sum(amount) FROM orders");
      return rows.map((r) => r["QUERY PLAN"]).join("\n");
    });
    expect(plan).toMatch(/InitPlan/);
    // The filter on the scan compares with the InitPlans' results ($0, $1 … in PostgreSQL 15-16, (InitPlan n).col1 in 17).
    const filters = plan.split("\n").filter((line) => /Filter:|Index Cond:/.test(line));
    expect(filters.length).toBeGreaterThan(0);
    for (const line of filters) expect(line).not.toMatch(/quarry_(current_org|location_scope)\(\)/);
  });

  it("still isolates tenants and location scope after the rewrite", async () => {
    const counts = await withTenant({ orgId: "org_acme", locationIds: ["loc_acme_nyc"] }, (tx) =>
      tx.$queryRawUnsafe<{ orgs: number; locations: number }[]>(
        "SELECT count(DISTINCT org_id)::int AS orgs, count(DISTINCT location_id)::int AS locations FROM orders",
      ),
    );
    expect(counts).toEqual([{ orgs: 1, locations: 1 }]);
  });
});
