import { Readable } from "node:stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CellValueError, COLUMN_TYPES, parseCell, tryParseCell, TypeInference, type ColumnType } from "./infer";
import { openRowSource } from "./index";
import { LOOSE } from "./test-support";

function infer(...columns: (string | null)[][]): ColumnType[] {
  const inference = new TypeInference(columns.length);
  const height = Math.max(...columns.map((column) => column.length));
  for (let row = 0; row < height; row++) inference.observe(columns.map((column) => column[row] ?? null));
  return inference.result();
}

describe("parseCell: the canonical PostgreSQL text of each type, or an error naming the value", () => {
  const cases: Array<[ColumnType, string, string | undefined]> = [
    ["integer", "42", "42"],
    ["integer", " -7 ", "-7"],
    ["integer", "+5", "5"],
    ["integer", "-0", "0"],
    ["integer", "9223372036854775807", "9223372036854775807"],
    ["integer", "-9223372036854775808", "-9223372036854775808"],
    ["integer", "9223372036854775808", undefined],
    ["integer", "007", undefined],
    ["integer", "1.0", undefined],
    ["integer", "1,000", undefined],
    ["numeric", "12.50", "12.50"],
    ["numeric", "-.5", "-.5"],
    ["numeric", "5.", "5."],
    ["numeric", "1.2e3", "1.2e3"],
    ["numeric", "99999999999999999999999", "99999999999999999999999"],
    ["numeric", "0.07", "0.07"],
    ["numeric", "007.5", undefined],
    ["numeric", ".", undefined],
    ["numeric", "e5", undefined],
    ["numeric", "NaN", undefined],
    ["numeric", "1e99999", undefined],
    ["boolean", "Yes", "true"],
    ["boolean", "f", "false"],
    ["boolean", "N", "false"],
    ["boolean", "TRUE", "true"],
    ["boolean", "1", undefined],
    ["boolean", "oui", undefined],
    ["date", "2024-02-29", "2024-02-29"],
    ["date", "2024/03/01", "2024-03-01"],
    ["date", "2023-02-29", undefined],
    ["date", "2024-13-01", undefined],
    ["date", "2024-03/01", undefined],
    ["date", "01/03/2024", undefined],
    ["date", "2024-03-01T10:00:00Z", undefined],
    ["timestamptz", "2024-03-01T10:00:00Z", "2024-03-01 10:00:00+00:00"],
    ["timestamptz", "2024-03-01 10:00", "2024-03-01 10:00:00"],
    ["timestamptz", "2024-03-01T10:00:00.123456+0530", "2024-03-01 10:00:00.123456+05:30"],
    ["timestamptz", "2024-03-01 23:59:59 -08", "2024-03-01 23:59:59-08:00"],
    ["timestamptz", "2024-03-01", "2024-03-01"],
    ["timestamptz", "2024-03-01 24:00", undefined],
    ["timestamptz", "2024-03-01T10:61", undefined],
    ["timestamptz", "2024-03-01T10:00+16:00", undefined],
    ["text", "  anything ", "  anything "],
  ];
  it.each(cases)("%s %j → %j", (type, text, canonical) => {
    expect(tryParseCell(type, text)).toBe(canonical);
    if (canonical === undefined) expect(() => parseCell(type, text)).toThrow(CellValueError);
    else expect(parseCell(type, text)).toBe(canonical);
  });

  it("names the value and the expected form, 422", () => {
    const error = (() => {
      try {
        parseCell("integer", "12.5");
      } catch (caught) {
        return caught as CellValueError;
      }
    })();
    expect(error).toMatchObject({ kind: "invalid", type: "integer", value: "12.5" });
    expect(error!.message).toMatch(/^"12.5" is not an integer/);
  });
});

describe("TypeInference", () => {
  it("takes the first type every non-null value fits; nulls never decide; an empty column is text", () => {
    expect(infer(["1", null, "-3"], ["1", "2.5"], ["yes", "NO"], ["2024-01-01", null], ["2024-01-01", "2024-01-02 10:00Z"], ["1", "x"], [null, null], ["007", "8"])).toEqual([
      "integer",
      "numeric",
      "boolean",
      "date",
      "timestamptz",
      "text",
      "text",
      "text",
    ]);
    expect(infer(["9223372036854775807", "9223372036854775808"])).toEqual(["numeric"]);
    expect(infer(["0", "1"])).toEqual(["integer"]);
  });

  it("looks at the whole file: 1,000 integer rows then a numeric one is numeric", async () => {
    const body = "id,amount\n" + Array.from({ length: 1500 }, (_, i) => `${i},${i === 1200 ? "3.25" : String(i * 10)}`).join("\n") + "\n";
    const source = await openRowSource(Readable.from([Buffer.from(body)]), { format: "csv", limits: LOOSE });
    const inference = new TypeInference(source.header.length);
    for await (const row of source.rows) inference.observe(row);
    expect(inference.result()).toEqual(["integer", "numeric"]);
  });

  it("whatever a column is inferred as, every one of its values loads as that type (one rule)", () => {
    const value = fc.oneof(
      fc.integer().map(String),
      fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
      fc.constantFrom("yes", "no", "t", "F", "true", "0", "1", "007", "", " 5 ", "2024-02-29", "2023-02-29", "2024-01-02T03:04:05Z", "2024-01-02 03:04", "x"),
      fc.date({ min: new Date("0001-01-01"), max: new Date("9999-12-31"), noInvalidDate: true }).map((d) => d.toISOString()),
      fc.string(),
    );
    fc.assert(
      fc.property(fc.array(fc.option(value, { nil: null }), { maxLength: 20 }), (column) => {
        const [type] = infer(column);
        expect(COLUMN_TYPES).toContain(type);
        for (const text of column) if (text !== null) expect(() => parseCell(type, text)).not.toThrow();
      }),
      { numRuns: 2000 },
    );
  });
});
