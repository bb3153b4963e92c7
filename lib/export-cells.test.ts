import ExcelJS from "exceljs";
import { describe, expect, it } from "vitest";
import { spreadsheetFormat } from "@/lib/dashboards/format";
import { csvField, neutralizeCell, toCsv, toXlsx } from "./export-cells";

describe("export cell neutralising", () => {
  it.each([
    ["=HYPERLINK(\"http://evil\",\"x\")", "'=HYPERLINK(\"http://evil\",\"x\")"],
    ["+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"],
    ["-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"],
    ["@SUM(A1:A2)", "'@SUM(A1:A2)"],
    ["\t=1+1", "'\t=1+1"],
    ["\r=1+1", "'\r=1+1"],
  ])("prefixes %j with a quote", (input, expected) => {
    expect(neutralizeCell(input)).toBe(expected);
  });

  it("leaves numbers and ordinary text alone", () => {
    expect(neutralizeCell(-12.5)).toBe(-12.5);
    expect(neutralizeCell("-12.5")).toBe("-12.5");
    expect(neutralizeCell("+3")).toBe("+3");
    expect(neutralizeCell("-1e3")).toBe("-1e3");
    expect(neutralizeCell("Coffee = good")).toBe("Coffee = good");
    expect(neutralizeCell(null)).toBe(null);
    expect(neutralizeCell("-")).toBe("'-");
  });

  it("quotes CSV fields and writes a BOM and CRLF lines", () => {
    expect(csvField('a,"b"')).toBe('"a,""b"""');
    expect(toCsv([["Name", "Amount"], ["=cmd()", -5]])).toBe("\uFEFFName,Amount\r\n'=cmd(),-5\r\n");
  });

  it("writes an XLSX with exceljs: formulas as quoted text, negative numbers as numbers", async () => {
    const buffer = await toXlsx([["Name", "Amount"], ["=1+1", -5], ["Plain", 3.25]], "Orders: 2026/11");
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(buffer);
    const sheet = book.worksheets[0];
    expect(sheet.name).toBe("Orders  2026 11");
    expect(sheet.getCell("A2").value).toBe("'=1+1");
    expect(sheet.getCell("A2").formula).toBeUndefined();
    expect(sheet.getCell("B2").value).toBe(-5);
    expect(sheet.getCell("B3").value).toBe(3.25);
  });

  it("keeps numbers as numbers in their declared formats (numeric strings too), ids as stored, as the grid shows them", async () => {
    const formats = { amount: "currency" as const, margin_pct: "percent" as const, units: { type: "number" as const, decimals: 0 } };
    const columns = ["order_id", "amount", "margin_pct", "units"] as const;
    const buffer = await toXlsx(
      [["Order id", "Amount", "Margin pct", "Units"], [1000061794, "1234.5", 35.2, 12000]],
      "Orders",
      columns.map((c) => spreadsheetFormat(c in formats ? formats[c as keyof typeof formats] : undefined)),
    );
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(buffer);
    const row = book.worksheets[0].getRow(2);
    expect([1, 2, 3, 4].map((i) => row.getCell(i).value)).toEqual([1000061794, 1234.5, 35.2, 12000]);
    expect([1, 2, 3, 4].map((i) => row.getCell(i).numFmt)).toEqual([undefined, '"$"#,##0.00;-"$"#,##0.00', 'General"%"', "#,##0"]);
    expect(spreadsheetFormat({ type: "currency", currency: "EUR", decimals: 0 })).toBe('"€"#,##0;-"€"#,##0');
    expect(book.worksheets[0].getRow(1).getCell(2).numFmt).toBeUndefined();
  });
});
