import type { CellComponent } from "tabulator-tables";
import { describe, expect, it } from "vitest";
import { tableCells } from "@/lib/dashboards/widget-figures";
import { columnDefinitions } from "./grid-widget";

/*
 * The grid prints every cell as the viewer's table and the PDF/PNG report do (tableCells): it used to keep its own
 * copy of the rule, which ignored a format declared on an identifier column.
 */
describe("grid columns", () => {
  const rows = [
    { order_id: 1000061794, location_id: "loc_acme_nyc", amount: 1234.5, units: 3 },
    { order_id: 1000061795, location_id: "loc_acme_bos", amount: 20.31, units: 12000 },
  ];
  const columns = ["order_id", "location_id", "amount", "units"];
  const printed = (formats: Parameters<typeof tableCells>[2]) => {
    const definitions = columnDefinitions(columns, rows, [], formats);
    return definitions.map((d) => rows.map((r) => {
      const value = r[d.field as keyof typeof r];
      return typeof d.formatter === "function" ? d.formatter({ getValue: () => value } as CellComponent, {}, () => undefined) : String(value);
    }));
  };
  const tablePrinted = (formats: Parameters<typeof tableCells>[2]) => {
    const cells = tableCells(columns, rows, formats);
    return columns.map((c) => rows.map((r) => cells.cell(c, r[c as keyof typeof r])));
  };

  it("print each cell as the table does: ids as stored, money in its declared format", () => {
    const formats = { amount: "currency" as const };
    expect(printed(formats)).toEqual(tablePrinted(formats));
    expect(printed(formats)[0]).toEqual(["1000061794", "1000061795"]);
    expect(printed(formats)[2]).toEqual(["$1,234.50", "$20.31"]);
  });

  it("follow a format declared on an identifier, as the table does", () => {
    const formats = { order_id: { type: "number" as const, decimals: 0 } };
    expect(printed(formats)).toEqual(tablePrinted(formats));
    expect(printed(formats)[0]).toEqual(["1,000,061,794", "1,000,061,795"]);
  });
});
