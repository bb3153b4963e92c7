import { readFileSync } from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import ExcelJS from "exceljs";
import JSZip from "jszip";
import { describe, expect, it } from "vitest";
import { listSheets } from "./index";
import { fixture, LOOSE, readAll, sourceError } from "./test-support";
import { XLSX_MAX_EXPANSION } from "./xlsx";

const bytes = (buffer: Buffer | ArrayBuffer | Uint8Array) => Readable.from([Buffer.from(buffer as Uint8Array)]);

async function workbookWith(fill: (sheet: ExcelJS.Worksheet) => void): Promise<Buffer> {
  const workbook = new ExcelJS.Workbook();
  fill(workbook.addWorksheet("Data"));
  return Buffer.from(await workbook.xlsx.writeBuffer());
}

describe("XLSX", () => {
  it("lists the sheets in the workbook's order and reads the chosen one; dates, formulas and booleans as canonical text", async () => {
    expect(await listSheets(fixture("two-sheets.xlsx"), LOOSE)).toEqual(["Summary", "Orders 2024"]);
    expect(await readAll(fixture("two-sheets.xlsx"), { format: "xlsx" })).toEqual({ header: ["region", "total"], rows: [["North", "10"]] });
    expect(await readAll(fixture("two-sheets.xlsx"), { format: "xlsx", sheet: "Orders 2024" })).toEqual({
      header: ["order", "placed", "amount", "gift"],
      rows: [
        ["1001", "2024-01-15", "19.99", "true"],
        ["1002", "2024-01-16 09:30:00", "5", "false"],
        ["1003", null, "24.99", "false"],
      ],
    });
  });

  it("an unknown sheet is refused with the list of sheets; a file that is not a workbook is refused", async () => {
    const error = await sourceError(readAll(fixture("two-sheets.xlsx"), { format: "xlsx", sheet: "Nope" }));
    expect(error).toMatchObject({ code: "unknown_sheet", kind: "invalid" });
    expect(error.message).toBe('The workbook has no sheet "Nope"; its sheets: "Summary", "Orders 2024"');
    expect(await sourceError(readAll(fixture("quoted.csv"), { format: "xlsx" }))).toMatchObject({ code: "syntax" });
  });

  it("skips empty rows, pads short ones, refuses a cell beyond the column limit naming the row", async () => {
    const file = await workbookWith((sheet) => {
      sheet.addRow(["a", "b", "c"]);
      sheet.addRow([1]);
      sheet.getCell("A4").value = "x";
      sheet.getCell("C4").value = "2024-01-01";
    });
    expect((await readAll(bytes(file), { format: "xlsx" })).rows).toEqual([
      ["1", null, null],
      ["x", null, "2024-01-01"],
    ]);
    const wide = await workbookWith((sheet) => {
      sheet.addRow(["a"]);
      sheet.getCell(2, 500).value = 1;
    });
    expect(await sourceError(readAll(bytes(wide), { format: "xlsx", limits: { maxColumns: 100 } }))).toMatchObject({ code: "max_columns", row: 1 });
    expect(await sourceError(readAll(bytes(wide), { format: "xlsx" }))).toMatchObject({ code: "extra_values", row: 1 });
  });

  it("limits: rows and bytes", async () => {
    const file = await workbookWith((sheet) => {
      sheet.addRow(["n"]);
      for (let i = 0; i < 50; i++) sheet.addRow([i]);
    });
    expect(await sourceError(readAll(bytes(file), { format: "xlsx", limits: { maxRows: 10 } }))).toMatchObject({ code: "max_rows", row: 11 });
    expect(await sourceError(readAll(bytes(file), { format: "xlsx", limits: { maxBytes: 1000 } }))).toMatchObject({ code: "max_bytes" });
  });

  it("a zip bomb (a sheet inflating over 100 times the file) is refused before exceljs reads it, in bounded memory", async () => {
    const zip = await JSZip.loadAsync(readFileSync(path.join(import.meta.dirname, "fixtures", "two-sheets.xlsx")));
    const sheet = await zip.file("xl/worksheets/sheet1.xml")!.async("string");
    // 40 MB of blanks inside the sheet's XML: valid XML, deflated to about 40 KB.
    const padded = sheet.replace("<sheetData>", `<sheetData>${" ".repeat(40 * 1024 * 1024)}`);
    zip.file("xl/worksheets/sheet1.xml", padded);
    const bomb = await zip.generateAsync({ type: "nodebuffer", compression: "DEFLATE", compressionOptions: { level: 9 } });
    expect(bomb.length * XLSX_MAX_EXPANSION + 16 * 1024 * 1024).toBeLessThan(padded.length);
    const before = process.memoryUsage().rss;
    const error = await sourceError(readAll(bytes(bomb), { format: "xlsx" }));
    expect(error).toMatchObject({ code: "expansion", kind: "too_large" });
    expect(error.message).toBe(`The XLSX inflates to more than ${XLSX_MAX_EXPANSION} times its size: refused as a zip bomb`);
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
  });
});
