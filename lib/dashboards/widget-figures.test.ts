import { describe, expect, it } from "vitest";
import { tableCells } from "./widget-figures";

/*
 * A table's cells as the viewer's table, the grid and the PDF/PNG report all print them (one rule): the PDF
 * printed an order id as 1,000,061,794 where the viewer's grid printed 1000061794 (issue 46).
 */
describe("table cells", () => {
  const rows = [
    { order_id: 1000061794, location_id: "loc_acme_nyc", amount: 1234.5, units: 3 },
    { order_id: 1000061795, location_id: "loc_acme_bos", amount: 20.31, units: 12000 },
  ];

  it("print identifiers as stored and other numbers grouped with the decimals their column needs", () => {
    const cells = tableCells(["order_id", "location_id", "amount", "units"], rows, {});
    expect(cells.numeric).toEqual(new Set(["order_id", "amount", "units"]));
    expect(rows.map((r) => cells.cell("order_id", r.order_id))).toEqual(["1000061794", "1000061795"]);
    expect(rows.map((r) => cells.cell("amount", r.amount))).toEqual(["1,234.50", "20.31"]);
    expect(rows.map((r) => cells.cell("units", r.units))).toEqual(["3", "12,000"]);
    expect(cells.cell("order_id", null)).toBe("");
  });

  it("follow a format the manifest declares, on an identifier too", () => {
    const cells = tableCells(["order_id"], rows, { order_id: { type: "number", decimals: 0 } });
    expect(cells.cell("order_id", 1000061794)).toBe("1,000,061,794");
  });
});
