import { describe, expect, it } from "vitest";
import { Dataset } from "@/lib/manifest/schema";
import { ANONYMOUS_VIEWER, fieldVisibility, viewedDataset } from "./field-policy";
import { selectDataset } from "./compile";

const dataset = Dataset.parse({
  id: "sales",
  from: "orders",
  dimensions: [
    { id: "channel", column: "orders.channel" },
    { id: "customer", column: "orders.customer_id", access: { hidden: true } },
    { id: "city", column: "orders.city", access: { mask: "'***'" } },
  ],
  metrics: [
    { id: "revenue", type: "sql", expression: "sum(orders.amount)" },
    { id: "cost", type: "sql", expression: "sum(orders.cost)", access: { roles: ["admin"], attributes: { team: ["finance", "audit"] } } },
    { id: "profit", type: "formula", expression: "revenue - cost" },
    { id: "margin", type: "formula", expression: "profit / revenue" },
    { id: "double", type: "formula", expression: "revenue * 2" },
  ],
  order_by: [{ column: "customer" }, { column: "channel" }],
});

describe("fieldVisibility", () => {
  it("admits a viewer holding a listed role and one listed value of every attribute, and no one else", () => {
    const of = (role: "admin" | "analyst" | null, attributes: Record<string, string[]>) => fieldVisibility(dataset, { role, attributes }).get("cost");
    expect(of("admin", { team: ["audit"] })).toBeUndefined();
    expect(of("admin", { team: ["sales"] })).toEqual({ kind: "absent", reason: "restricted" });
    expect(of("admin", {})).toEqual({ kind: "absent", reason: "restricted" });
    expect(of("analyst", { team: ["finance"] })).toEqual({ kind: "absent", reason: "restricted" });
    expect(of(null, { team: ["finance"] })).toEqual({ kind: "absent", reason: "restricted" });
  });

  it("a derived metric inherits through a chain of formulas; one over visible fields stays; hidden and masks apply to everyone", () => {
    const admitted = fieldVisibility(dataset, { role: "admin", attributes: { team: ["finance"] } });
    expect(Object.fromEntries(admitted)).toEqual({ customer: { kind: "absent", reason: "hidden" }, city: { kind: "masked", expression: "'***'" } });
    const anonymous = fieldVisibility(dataset, ANONYMOUS_VIEWER);
    expect(anonymous.get("profit")).toEqual({ kind: "absent", reason: "restricted" });
    expect(anonymous.get("margin")).toEqual({ kind: "absent", reason: "restricted" });
    expect(anonymous.has("double")).toBe(false);
  });
});

describe("viewedDataset", () => {
  it("selects no absent field (not even as NULL) and the mask in a masked field's place", () => {
    const viewed = viewedDataset(dataset, fieldVisibility(dataset, ANONYMOUS_VIEWER));
    const selection = selectDataset(viewed, { limit: 10 });
    expect(selection.columns).toEqual(["channel", "city", "revenue", "double"]);
    expect(selection.dimensions).toEqual([
      { id: "channel", column: "orders.channel" },
      { id: "city", column: "'***'" },
    ]);
    expect(selection.order).toEqual([{ id: "channel", expression: "orders.channel", dir: "asc" }]);
    expect(JSON.stringify(selection)).not.toMatch(/customer_id|orders\.cost|orders\.city/);
  });
});
