import { describe, expect, it } from "vitest";
import type { Dataset, FilterOperator } from "@/lib/manifest/schema";
import { compileDataset } from "./compile";
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

async function bothPaths(condition: FilterCondition, timeZone: string) {
  const context = { now, timeZone };
  const windowPredicate = { field: "order_date", predicate: toPredicate(window, context) };
  const predicate = { field: condition.field, predicate: toPredicate(condition, context) };

  const compiled = compileDataset(ordersDataset, { filters: [windowPredicate, predicate], limit: 100_000 });
  // Values travel as bind parameters, never inside the statement text.
  if (typeof condition.value === "string" && condition.value.length > 3) expect(compiled.text).not.toContain(condition.value);
  const sqlRows = await runReadOnly(scope, compiled.text, compiled.values, { timeZone });

  const all = compileDataset(ordersDataset, { filters: [windowPredicate], limit: 100_000 });
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
