import { Readable } from "node:stream";
import iconv from "iconv-lite";
import { describe, expect, it } from "vitest";
import { detectDelimiter } from "@/lib/csv-delimiter";
import { openRowSource } from "./index";
import { endless, fixture, LOOSE, readAll, sourceError } from "./test-support";

const text = (content: string | Buffer) => Readable.from([Buffer.from(content)]);

describe("CSV", () => {
  it("reads quoted fields with delimiters, quotes and line breaks; drops the BOM; empty values are null", async () => {
    const { header, rows } = await readAll(fixture("quoted.csv"), { format: "csv" });
    expect(header).toEqual(["id", "name", "note", "amount", "paid", "day"]);
    expect(rows).toEqual([
      ["1", "Smith, Jane", 'said "hi"', "12.50", "yes", "2024-01-31"],
      ["2", "Lee", "two\nlines", null, "no", "2024-02-29"],
      ["3", "Ødegård", null, "7", "yes", null],
    ]);
  });

  it("reads a semicolon file in its declared windows-1252, and refuses it as UTF-8 rather than garble it", async () => {
    const { header, rows } = await readAll(fixture("semicolon-1252.csv"), { format: "csv", encoding: "windows-1252" });
    expect(header).toEqual(["ville", "montant", "note"]);
    expect(rows).toEqual([
      ["Montréal", "12", "« 5 € »"],
      ["Québec", "7", "“ok”"],
    ]);
    const error = await sourceError(readAll(fixture("semicolon-1252.csv"), { format: "csv" }));
    expect(error).toMatchObject({ code: "encoding", kind: "invalid" });
    expect(error.message).toMatch(/not valid UTF-8.*declare its encoding/);
    expect(await sourceError(readAll(text("a\n1\n"), { format: "csv", encoding: "klingon" }))).toMatchObject({ code: "encoding" });
  });

  it("reads other encodings with their BOM (UTF-16LE)", async () => {
    const bytes = iconv.encode("a\tb\r\nx\ty\r\n", "utf-16le", { addBOM: true });
    expect(await readAll(text(bytes), { format: "csv", encoding: "utf-16le" })).toEqual({ header: ["a", "b"], rows: [["x", "y"]] });
  });

  it("detects the delimiter from the header line (outside quotes) and takes a given one", async () => {
    expect(detectDelimiter('"a,b"|c|d\n1,2,3,4,5')).toBe("|");
    expect(detectDelimiter("a\tb;c\td")).toBe("\t");
    expect(detectDelimiter("single")).toBe(",");
    expect((await readAll(text("a|b\n1|2\n"), { format: "csv" })).rows).toEqual([["1", "2"]]);
    expect((await readAll(text("a;b\n1;2\n"), { format: "csv", delimiter: "," })).header).toEqual(["a;b"]);
    expect(await sourceError(readAll(text("a\n"), { format: "csv", delimiter: '"' }))).toMatchObject({ code: "syntax" });
  });

  it("pads short rows with nulls, skips blank lines, refuses a row with more values than the header, naming the row", async () => {
    expect((await readAll(text("a,b,c\n1\n\n2,3,\n"), { format: "csv" })).rows).toEqual([
      ["1", null, null],
      ["2", "3", null],
    ]);
    const error = await sourceError(readAll(text("a,b\n1,2\n3,4,5\n"), { format: "csv" }));
    expect(error).toMatchObject({ code: "extra_values", row: 2, kind: "invalid" });
    expect(error.message).toBe("Row 2: 3 values, but the header names 2 columns");
  });

  it("refuses an empty file and a quote left open", async () => {
    expect(await sourceError(readAll(text(""), { format: "csv" }))).toMatchObject({ code: "no_header" });
    expect(await sourceError(readAll(text('a,b\n1,"open\n'), { format: "csv" }))).toMatchObject({ code: "syntax" });
  });
});

describe("CSV limits, enforced while streaming", () => {
  it("bytes: the file's size", async () => {
    const body = "a,b\n" + "1,2\n".repeat(1000);
    const error = await sourceError(readAll(text(body), { format: "csv", limits: { maxBytes: 1000 } }));
    expect(error).toMatchObject({ code: "max_bytes", kind: "too_large" });
    expect(error.message).toBe("The file is larger than the limit of 1000 bytes");
  });

  it("rows, naming the first row over", async () => {
    const error = await sourceError(readAll(text("a\n1\n2\n3\n"), { format: "csv", limits: { maxRows: 2 } }));
    expect(error).toMatchObject({ code: "max_rows", row: 3 });
  });

  it("a 100,000-column header is refused by openRowSource, before any row is read", async () => {
    const header = Array.from({ length: 100_000 }, (_, i) => `c${i}`).join(",");
    const body = `${header}\n${"1,".repeat(99_999)}1\n`;
    const error = await sourceError(openRowSource(text(body), { format: "csv", limits: { ...LOOSE, maxColumns: 1000 } }));
    expect(error).toMatchObject({ code: "max_columns", kind: "too_large" });
    expect(error.message).toBe("The header has 100000 columns; the limit is 1000");
  });

  it("field bytes", async () => {
    const error = await sourceError(readAll(text(`a,b\n1,${"é".repeat(60)}\n`), { format: "csv", limits: { maxFieldBytes: 100 } }));
    expect(error).toMatchObject({ code: "max_field_bytes", row: 1 });
    expect(error.message).toContain('column "b"');
  });

  it("an endless line is refused after maxLineBytes, never buffered: in the header and in a row", async () => {
    const limit = 1024 * 1024;
    const header = endless("x");
    expect(await sourceError(readAll(header.stream, { format: "csv", limits: { maxLineBytes: limit } }))).toMatchObject({ code: "max_line_bytes" });
    expect(header.pulled()).toBeLessThan(limit * 2);
    for (const delimiter of [undefined, ","]) {
      const row = endless("y", "a,b\n1,2\n");
      const error = await sourceError(readAll(row.stream, { format: "csv", delimiter, limits: { maxLineBytes: limit } }));
      expect(error).toMatchObject({ code: "max_line_bytes", row: 2 });
      expect(row.pulled()).toBeLessThan(limit * 2);
    }
  });
});
