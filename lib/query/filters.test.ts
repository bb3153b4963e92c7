import { describe, expect, it } from "vitest";
import type { Dataset, FilterOperator } from "@/lib/manifest/schema";
import { compileDataset } from "./compile";
import { withTenant } from "@/lib/db/tenant";
import { runReadOnly } from "./execute";
import { type FilterCondition, filterRows, toPredicate } from "./filters";

/**
 * One table of filter cases, run through both paths on the same rows: pushed into SQL
 * against the seeded warehouse, and applied in memory to the unfiltered rows. Both must
 * keep exactly the same orders.
 */
const scope = { orgId: "org_acme" };
const now = new Date("2025-03-20T12:00:00Z");

const ordersDataset: Dataset = {
  id: "orders_window",
  from: "orders",
  dimensions: [
    { id: "id", column: "orders.id" },
    { id: "order_date", column: "orders.order_date" },
    { id: "channel", column: "orders.channel" },
    { id: "quantity", column: "orders.quantity" },
    { id: "amount", column: "orders.amount" },
  ],
  metrics: [],
};

// A ten-day window keeps both paths small (about 700 orders).
const window: FilterCondition = { source: "w", field: "order_date", operator: "between", value: "2025-03-01 to 2025-03-10", required: true };

const CASES: [string, FilterOperator, string, unknown][] = [
  ["eq text", "eq", "channel", "online"],
  ["eq number", "eq", "quantity", 2],
  ["eq with a list acts as in", "eq", "channel", ["store"]],
  ["in", "in", "channel", ["store", "partner"]],
  ["gt", "gt", "amount", 100],
  ["lt", "lt", "quantity", 2],
  ["gte", "gte", "quantity", 3],
  ["lte decimal", "lte", "amount", 20.5],
  ["contains, any case", "contains", "channel", "LIN"],
  ["contains a LIKE wildcard literally", "contains", "channel", "%"],
  ["contains an underscore literally", "contains", "channel", "_"],
  ["date: one day", "date", "order_date", "2025-03-05"],
  ["date: range", "date", "order_date", "2025-03-03 to 2025-03-04"],
  ["date: relative", "date", "order_date", "15 days ago"],
  ["date: before", "date", "order_date", "before 2025-03-03"],
  ["date: after", "date", "order_date", "after 2025-03-08"],
  ["date: last 14 days", "date", "order_date", "last 14 days"],
  ["date: as a pair", "date", "order_date", ["2025-03-02", "2025-03-02"]],
  ["between numbers", "between", "amount", [50, 60]],
  ["between open-ended object", "between", "quantity", { from: 3 }],
  ["between dates", "between", "order_date", { from: "2025-03-02", to: "2025-03-03" }],
  ["injection in a value stays a value", "eq", "channel", "online' OR '1'='1"],
  ["injection in a contains value", "contains", "channel", "'; DROP TABLE orders; --"],
];

async function bothPaths(condition: FilterCondition, timeZone: string, dataset: Dataset = ordersDataset) {
  const context = { now, timeZone };
  const windowPredicate = { field: "order_date", predicate: toPredicate(window, context) };
  const predicate = { field: condition.field, predicate: toPredicate(condition, context) };

  const compiled = compileDataset(dataset, { filters: [windowPredicate, predicate], limit: 100_000 });
  // Values travel as bind parameters, never inside the statement text.
  if (typeof condition.value === "string" && condition.value.length > 3) expect(compiled.text).not.toContain(condition.value);
  const sqlRows = await runReadOnly(scope, compiled.text, compiled.values, { timeZone });

  const all = compileDataset(dataset, { filters: [windowPredicate], limit: 100_000 });
  const memoryRows = filterRows(await runReadOnly(scope, all.text, all.values, { timeZone }), [predicate], timeZone);
  return { sql: sqlRows.map((r) => r.id).sort(), memory: memoryRows.map((r) => r.id).sort(), total: all };
}

describe("filters: SQL and in-memory paths agree", () => {
  it.each(CASES)("%s", async (_name, operator, field, value) => {
    const { sql, memory } = await bothPaths({ source: "f", field, operator, value, required: true }, "UTC");
    expect(sql).toEqual(memory);
  });

  it("agrees in a time zone east of UTC, where days start the evening before", async () => {
    const { sql, memory } = await bothPaths({ source: "f", field: "order_date", operator: "date", value: "2025-03-05", required: true }, "Asia/Tokyo");
    expect(sql.length).toBeGreaterThan(0);
    expect(sql).toEqual(memory);
  });

  it("agrees in a time zone west of UTC", async () => {
    const { sql, memory } = await bothPaths({ source: "f", field: "order_date", operator: "date", value: "2025-03-05 to 2025-03-06", required: true }, "America/Los_Angeles");
    const single = await bothPaths({ source: "f", field: "order_date", operator: "date", value: "2025-03-05 to 2025-03-06", required: true }, "UTC");
    expect(sql).toEqual(memory);
    expect(sql).toEqual(single.sql);
  });

  it("the window itself is not empty and most cases select a strict subset", async () => {
    const { sql } = await bothPaths({ source: "f", field: "channel", operator: "eq", value: "online", required: true }, "UTC");
    expect(sql.length).toBeGreaterThan(10);
  });
});

/** The same orders with their day as a timestamptz (local midnight plus 30 minutes) and as ISO text. */
const typedDataset: Dataset = {
  ...ordersDataset,
  id: "orders_typed",
  dimensions: [
    ...ordersDataset.dimensions,
    { id: "ordered_at", column: "(orders.order_date + time '00:30')::timestamptz" },
    { id: "order_day_text", column: "to_char(orders.order_date, 'YYYY-MM-DD')" },
  ],
};

describe("date filters in the column's own type", () => {
  const days = (field: string, value: unknown, timeZone: string) => bothPaths({ source: "f", field, operator: "date", value, required: true }, timeZone, typedDataset);

  it.each([["UTC"], ["Asia/Tokyo"], ["America/Los_Angeles"]])("a timestamptz and an ISO text column select the same days as the date column (%s)", async (timeZone) => {
    for (const value of ["2025-03-05 to 2025-03-06", "before 2025-03-03", "since 2025-03-08"]) {
      const byDate = await days("order_date", value, timeZone);
      expect(byDate.sql.length).toBeGreaterThan(0);
      for (const field of ["ordered_at", "order_day_text"]) {
        const other = await days(field, value, timeZone);
        expect(other.sql).toEqual(other.memory);
        expect(other.sql).toEqual(byDate.sql);
      }
    }
  });

  it("binds each bound as the calendar day it starts, untyped, not as a timestamptz", () => {
    const predicate = toPredicate({ source: "f", field: "order_date", operator: "date", value: "2025-03-05 to 2025-03-06", required: true }, { now, timeZone: "Asia/Tokyo" });
    const compiled = compileDataset(ordersDataset, { filters: [{ field: "order_date", predicate }], limit: 10 });
    expect(compiled.values.slice(0, 2)).toEqual(["2025-03-05", "2025-03-07"]);
    expect(compiled.text).not.toContain("timestamptz");
    expect(compiled.text).toMatch(/\(orders\.order_date\) >= \$1 AND \(orders\.order_date\) < \$2/);
  });

  it("under row-level security the date bounds are an index condition, not a filter over the tenant's rows", async () => {
    const predicate = toPredicate({ source: "f", field: "order_date", operator: "date", value: "2025-03-05", required: true }, { now, timeZone: "UTC" });
    const compiled = compileDataset(ordersDataset, { filters: [{ field: "order_date", predicate }], limit: 10 });
    const plan = await withTenant(scope, async (tx) => {
      // Index paths only, so the assertion is about which conditions an index may take, not about costs.
      await tx.$executeRawUnsafe("SET LOCAL enable_seqscan = off");
      const rows = await tx.$queryRawUnsafe<{ "QUERY PLAN": string }[]>(`EXPLAIN (COSTS OFF) ${compiled.text}`, ...compiled.values);
      return rows.map((r) => r["QUERY PLAN"]).join("\n");
    }, { role: "reader", readOnly: true, timeZone: "UTC" });
    const indexConditions = plan.split("\n").filter((line) => line.includes("Index Cond:"));
    expect(indexConditions.some((line) => /order_date >= '2025-03-05'::date/.test(line) && /order_date < '2025-03-06'::date/.test(line))).toBe(true);
  });
});
