import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { parquetWriteBuffer } from "hyparquet-writer";
import { afterAll, describe, expect, it } from "vitest";
import { openRowSource } from "./index";
import { fixture, LOOSE, readAll, sourceError } from "./test-support";

// This file's own temporary folder (os.tmpdir() reads TMPDIR each time), so other tests' files do not count.
const temporary = mkdtempSync(path.join(tmpdir(), "parquet-test-"));
process.env.TMPDIR = temporary;
afterAll(() => rmSync(temporary, { recursive: true, force: true }));
const spooled = () => readdirSync(temporary).length;

describe("Parquet", () => {
  it("reads every row group; numbers, booleans and timestamps (to the microsecond, UTC) as canonical text; nulls", async () => {
    expect(await readAll(fixture("sales.parquet"), { format: "parquet" })).toEqual({
      header: ["id", "city", "amount", "paid", "at"],
      rows: [
        ["1", "Lyon", "1.5", "true", "2024-05-01 12:00:00.000000+00:00"],
        ["2", null, "2.25", "false", "2024-05-02 00:00:00.000000+00:00"],
        ["3", "Oslo", "-3", null, null],
      ],
    });
  });

  it("refuses a file that is not Parquet, and too many rows or columns before reading a row", async () => {
    expect(await sourceError(readAll(fixture("quoted.csv"), { format: "parquet" }))).toMatchObject({ code: "syntax", kind: "invalid" });
    expect(await sourceError(openRowSource(fixture("sales.parquet"), { format: "parquet", limits: { ...LOOSE, maxRows: 2 } }))).toMatchObject({
      code: "max_rows",
      message: "The file has 3 rows; the limit is 2",
    });
    expect(await sourceError(openRowSource(fixture("sales.parquet"), { format: "parquet", limits: { ...LOOSE, maxColumns: 4 } }))).toMatchObject({ code: "max_columns" });
    expect(await sourceError(openRowSource(fixture("sales.parquet"), { format: "parquet", limits: { ...LOOSE, maxBytes: 100 } }))).toMatchObject({ code: "max_bytes" });
  });

  it("large integers in full; values over the field limit refused naming the row", async () => {
    const file = parquetWriteBuffer({
      columnData: [
        { name: "big", data: new BigInt64Array([9223372036854775807n, -9223372036854775808n]), type: "INT64" },
        { name: "s", data: ["short", "x".repeat(300)], type: "STRING" },
      ],
    });
    const input = () => Readable.from([Buffer.from(file)]);
    expect(await sourceError(readAll(input(), { format: "parquet", limits: { maxFieldBytes: 100 } }))).toMatchObject({ code: "max_field_bytes", row: 2 });
    expect((await readAll(input(), { format: "parquet" })).rows.map((row) => row[0])).toEqual(["9223372036854775807", "-9223372036854775808"]);
  });

  it("removes its temporary file when the rows are read, stopped early, or never iterated but returned", async () => {
    await readAll(fixture("sales.parquet"), { format: "parquet" });
    const stopped = await openRowSource(fixture("sales.parquet"), { format: "parquet", limits: LOOSE });
    for await (const row of stopped.rows) if (row) break;
    const untouched = await openRowSource(fixture("sales.parquet"), { format: "parquet", limits: LOOSE });
    expect(spooled()).toBe(1);
    await (untouched.rows as AsyncGenerator).return(undefined);
    expect(spooled()).toBe(0);
  });
});
