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

describe("the rollup scope rule over an organization's own tables", () => {
  const own = {
    columns: new Map<string, readonly string[]>([
      ["spend", ["org_id", "day", "store", "channel", "amount"]],
      ["coded", ["org_id", "day", "store_code", "amount"]],
      ["plain", ["org_id", "day", "amount"]],
    ]),
    locations: new Map([
      ["spend", { column: "store", by: "id" as const }],
      ["coded", { column: "store_code", by: "code" as const }],
    ]),
  };
  const definition = (source: string, location: string | null, table = source.split(" ")[0]) => ({
    name: "x",
    source,
    time: { column: `${table}.day`, grain: "day" as const },
    location,
    dimensions: [],
    measures: [{ expression: `sum(${table}.amount)`, fn: "sum" as const }],
  });
  const messages = (d: ReturnType<typeof definition>, tables: typeof own | null = own) => rollupScopeProblems(d, tables ?? undefined).map((p) => p.message).join("\n");

  it("accepts a table by its location column of ids, one without a location, and one of codes tied to locations.code", () => {
    expect(messages(definition("spend", "spend.store"))).toBe("");
    expect(messages(definition("spend JOIN locations ON locations.id = spend.store", "spend.store"))).toBe("");
    expect(messages(definition("plain", null))).toBe("");
    expect(messages(definition("coded JOIN locations ON locations.code = coded.store_code", "locations.id"))).toBe("");
    // Through a chain: the orders' location, the location row of it, the coded row of that location's code.
    expect(messages(definition("orders JOIN locations ON locations.id = orders.location_id JOIN coded ON coded.store_code = locations.code", "orders.location_id", "coded"))).toBe("");
  });

  it("refuses what could file another location's rows under a location, and names it cannot resolve", () => {
    // Without the catalog the name is unknown; a schema-qualified name is never an own table.
    expect(messages(definition("spend", "spend.store"), null)).toMatch(/reads only the warehouse tables and the organization's own/);
    expect(messages(definition("public.spend", "spend.store", "spend"))).toMatch(/it reads public\.spend/);
    expect(messages(definition("spend", null))).toMatch(/needs a location dimension/);
    expect(messages(definition("spend", "spend.channel"))).toMatch(/must be the column a location policy tests \(.*spend\.store/);
    // Codes file no rows: tie them to a location id.
    expect(messages(definition("coded", "coded.store_code"))).toMatch(/holds location codes/);
    expect(messages(definition("coded JOIN locations ON TRUE", "locations.id"))).toMatch(/coded is not joined to locations on equal locations/);
    expect(messages(definition("coded JOIN locations ON locations.name = coded.store_code", "locations.id"))).toMatch(/not joined/);
    // A code tied to a location id, or locations tied to locations by code, are no ties.
    expect(messages(definition("coded JOIN locations ON locations.id = coded.store_code", "locations.id"))).toMatch(/not joined/);
    expect(
      messages(definition("orders JOIN locations ON locations.id = orders.location_id JOIN locations AS l2 ON l2.code = locations.code", "orders.location_id", "orders")),
    ).toMatch(/l2 is not joined/);
    // An outer join's condition ties only its null-extended side.
    expect(messages(definition("spend LEFT JOIN coded JOIN locations ON locations.code = coded.store_code ON locations.id = spend.store", "spend.store"))).toBe("");
    expect(messages(definition("coded LEFT JOIN locations ON locations.code = coded.store_code", "locations.id"))).toMatch(/null side/);
  });
});
