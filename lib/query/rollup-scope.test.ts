import { describe, expect, it } from "vitest";
import { withTenant } from "@/lib/db/tenant";
import { ROW_FUNCTIONS, ROW_OPERATORS, rollupScopeProblems } from "./rollup-scope";

/*
 * The lists the rollup scope rule resolves names against are the database's own facts, on the engine the tests
 * run on: functions that are neither volatile nor set-returning nor aggregates, and operators backed by such
 * functions. The warehouse tables' columns and location policies are lib/db/warehouse.ts's, held by its own test.
 */

const catalog = <T,>(sql: string, ...values: unknown[]) => withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRawUnsafe<T[]>(sql, ...values));

describe("the rollup scope rule's catalog", () => {
  it("lists only plain functions that are neither volatile nor set-returning, each of them defined", async () => {
    const rows = await catalog<{ proname: string; volatile: boolean; sets: boolean; kind: string }>(
      `SELECT p.proname::text, p.provolatile = 'v' AS volatile, p.proretset AS sets, p.prokind::text AS kind
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = 'pg_catalog' AND p.proname = ANY ($1::text[])`,
      [...ROW_FUNCTIONS],
    );
    expect(new Set(rows.map((r) => r.proname))).toEqual(ROW_FUNCTIONS);
    expect(rows.filter((r) => r.volatile || r.sets || r.kind !== "f")).toEqual([]);
  });

  it("lists only operators whose every definition calls a function that is not volatile", async () => {
    const rows = await catalog<{ oprname: string; volatile: boolean }>(
      `SELECT o.oprname::text, p.provolatile = 'v' AS volatile
         FROM pg_operator o JOIN pg_namespace n ON n.oid = o.oprnamespace JOIN pg_proc p ON p.oid = o.oprcode
        WHERE n.nspname = 'pg_catalog' AND o.oprname = ANY ($1::text[])`,
      [...ROW_OPERATORS],
    );
    expect(new Set(rows.map((r) => r.oprname))).toEqual(ROW_OPERATORS);
    expect(rows.filter((r) => r.volatile)).toEqual([]);
  });

  it("answers a definition without touching the database, and the same way twice", () => {
    const definition = {
      name: "x",
      source: "orders JOIN locations ON locations.id = orders.location_id",
      time: { column: "orders.order_date", grain: "day" as const },
      location: "orders.location_id",
      dimensions: ["locations.region"],
      measures: [{ expression: "sum(orders.amount)", fn: "sum" as const }],
    };
    expect(rollupScopeProblems(definition)).toEqual([]);
    expect(rollupScopeProblems({ ...definition, source: "orders CROSS JOIN locations" })).toEqual(rollupScopeProblems({ ...definition, source: "orders CROSS JOIN locations" }));
  });
});
