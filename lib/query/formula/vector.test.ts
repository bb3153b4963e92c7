import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type FormulaRow, type FormulaValue, compileFormula, compileFormulaSource } from "./compile";
import type { FormulaNode } from "./parse";
import { formulaTree } from "@/test/support/formula-arbitrary";
import { applyFormulaSteps, planFormulaMetrics } from "./plan";
import { CHUNK_ROWS, compileFormulaSourceVector, compileNodeVector, evaluateFormulaRows } from "./vector";

// The column evaluator must give, cell for cell (Object.is: -0 and 0 differ), what the row interpreter gives.
const FIELDS = new Set(["a", "b", "c", "s", "flag"]);

function rowValues(source: string, rows: FormulaRow[]): FormulaValue[] {
  const evaluate = compileFormulaSource(source, FIELDS);
  return rows.map((row) => evaluate(row));
}

function expectSameCells(actual: FormulaValue[], expected: FormulaValue[]): void {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    if (!Object.is(actual[i], expected[i])) expect({ row: i, value: actual[i] }).toEqual({ row: i, value: expected[i] });
  }
}

// Numbers of every awkward kind, nulls and missing cells: a column of these reads as a typed column.
const numericCell = fc.oneof(
  fc.double(),
  fc.integer({ min: -5, max: 5 }),
  fc.constantFrom(0, -0, 1, -1, 0.5, 2.5, -2.5, 1e308, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
  fc.constant(null),
  fc.constant(undefined),
);
const numericRow = fc.record({ a: numericCell, b: numericCell, c: numericCell, s: fc.constantFrom("x", "y", "", null), flag: fc.constantFrom(true, false, null) }, { requiredKeys: [] });
// Enough rows to cross a chunk boundary, a short last chunk included.
const numericRows = fc.array(numericRow, { minLength: 1, maxLength: CHUNK_ROWS + 300 });

/** Each shape with a typed loop, and the kind its result has when its inputs are numeric columns. */
const SHAPES: [string, "num" | "bool"][] = [
  ...["+", "-", "*", "/", "//", "%", "**"].flatMap((op): [string, "num"][] => [
    [`a ${op} b`, "num"],
    [`a ${op} 3`, "num"],
    [`a ${op} 0`, "num"],
    [`a ${op} -2.5`, "num"],
    [`7 ${op} a`, "num"],
    [`a ${op} null`, "num"],
  ]),
  ...["<", "<=", ">", ">="].flatMap((op): [string, "bool"][] => [
    [`a ${op} b`, "bool"],
    [`a ${op} 0`, "bool"],
    [`2 ${op} a`, "bool"],
    [`a ${op} null`, "bool"],
  ]),
  ["a == b", "bool"],
  ["a != b", "bool"],
  ["a == 0", "bool"],
  ["a != 1", "bool"],
  ["a == null", "bool"],
  ["null != a", "bool"],
  ["a == 'x'", "bool"],
  ["(a > b) == true", "bool"],
  ["(a > b) == null", "bool"],
  ["s == 'x'", "bool"],
  ["s != 'x'", "bool"],
  ["s == ''", "bool"],
  ["flag == true", "bool"],
  ["a if a > b else b", "num"],
  ["a if b else c", "num"],
  ["a if a > 0 else null", "num"],
  ["a > 0 if b else b < 0", "bool"],
  ["a / b if b != 0 else 0", "num"],
  ["a > 0 and b > 0", "bool"],
  ["a > 0 or b < 0", "bool"],
  ["a and b", "num"],
  ["a or b", "num"],
  ["a or 5", "num"],
  ["not a", "bool"],
  ["not (a > b)", "bool"],
  ["-a", "num"],
  ["+a", "num"],
  ["-(a - b)", "num"],
  ["abs(a)", "num"],
  ["round(a)", "num"],
  ["round(a, 2)", "num"],
  ["round(a, -1)", "num"],
  ["round(a / b * 100, 1)", "num"],
  ["int(a)", "num"],
  ["float(a)", "num"],
  ["min(a, b)", "num"],
  ["max(a, b, 3)", "num"],
  ["min(a, null)", "num"],
  ["round((a - b) / a * 100, 1) if a > 0 and s != 'x' else 0", "num"],
];

describe("column evaluator: typed shapes", () => {
  it.each(SHAPES)("%s gives the row interpreter's cells, as a typed %s column", (source, kind) => {
    const evaluate = compileFormulaSourceVector(source, FIELDS);
    fc.assert(
      fc.property(numericRows, (rows) => {
        const result = evaluateFormulaRows(evaluate, rows);
        expectSameCells(result.values, rowValues(source, rows));
        // Every chunk took the typed loop, not the row-by-row fallback.
        expect(new Set(result.kinds)).toEqual(new Set([kind]));
      }),
      { numRuns: 40 },
    );
  });
});

describe("column evaluator: everything else", () => {
  const anyCell = fc.oneof(numericCell, fc.string({ maxLength: 3 }), fc.boolean(), fc.object({ maxDepth: 0 }));
  const anyRows = fc.array(fc.record({ a: anyCell, b: anyCell, c: anyCell, s: anyCell, flag: anyCell }, { requiredKeys: [] }), { minLength: 1, maxLength: CHUNK_ROWS + 50 });
  const field = fc.constantFrom(...FIELDS).map((name): FormulaNode => ({ type: "field", name, at: 0 }));
  const tree = formulaTree({
    leaf: fc.oneof(
      field,
      field,
      fc.oneof(fc.integer({ min: -3, max: 1000 }), fc.constantFrom(0.5, 1e999, true, false, null, "x", "")).map((value): FormulaNode => ({ type: "literal", value, at: 0 })),
    ),
    unary: ["-", "+", "not"],
    calls: ["abs", "float", "int", "len", "round"],
    roundWithDigits: true,
  });
  const known = (name: string) => FIELDS.has(name);

  it("any formula over numeric columns gives the row interpreter's cells", () => {
    fc.assert(
      fc.property(tree, fc.array(numericRow, { minLength: 1, maxLength: 200 }), (node, rows) => {
        const reference = compileFormula(node, known);
        expectSameCells(evaluateFormulaRows(compileNodeVector(node, known), rows).values, rows.map((row) => reference(row)));
      }),
      { numRuns: 1500 },
    );
  });

  it("any formula over columns of any cells (strings, booleans, objects, mixed) gives the row interpreter's cells", () => {
    fc.assert(
      fc.property(tree, anyRows, (node, rows) => {
        const reference = compileFormula(node, known);
        expectSameCells(evaluateFormulaRows(compileNodeVector(node, known), rows).values, rows.map((row) => reference(row)));
      }),
      { numRuns: 300 },
    );
  });

  it("a column that turns from numbers to strings in a later chunk is read right in every chunk", () => {
    const rows: FormulaRow[] = Array.from({ length: CHUNK_ROWS * 2 + 5 }, (_, i) => ({ a: i < CHUNK_ROWS + 3 ? i : `n${i}`, b: 2 }));
    for (const source of ["a * b", "a + 'x'", "a == 'n1030'", "a > 5"]) {
      expectSameCells(evaluateFormulaRows(compileFormulaSourceVector(source, FIELDS), rows).values, rowValues(source, rows));
    }
  });

  it("inherited cells read as null, as in the row interpreter", () => {
    const rows: FormulaRow[] = [Object.create({ s: "x", a: 3, flag: true }), { s: "x", a: 3, flag: true }];
    for (const source of ["s == 'x'", "s != 'x'", "a + 1", "flag == true", "s + 'y'"]) {
      expectSameCells(evaluateFormulaRows(compileFormulaSourceVector(source, FIELDS), rows).values, rowValues(source, rows));
    }
  });

  it("applyFormulaSteps writes each step's column over many chunks, later steps reading earlier ones", () => {
    const rows: Record<string, unknown>[] = Array.from({ length: CHUNK_ROWS * 3 + 17 }, (_, i) => ({ revenue: i % 7 === 0 ? null : i * 1.5, cost: i, channel: i % 3 === 0 ? "partner" : "store" }));
    const expected = rows.map((row) => {
      const revenue = row.revenue as number | null;
      const margin = revenue === null ? null : revenue - (row.cost as number);
      const share = margin === null || revenue === null || revenue === 0 ? null : margin / revenue;
      return { ...row, margin, share, label: row.channel === "partner" ? "p" : share !== null && share > 0.2 ? "high" : "low" };
    });
    const { steps, errors } = planFormulaMetrics(
      [
        { id: "label", expression: "'p' if channel == 'partner' else 'high' if share > 0.2 else 'low'" },
        { id: "share", expression: "margin / revenue" },
        { id: "margin", expression: "revenue - cost" },
      ],
      new Set(["revenue", "cost", "channel"]),
    );
    expect(errors).toEqual([]);
    applyFormulaSteps(rows, steps);
    expect(rows).toEqual(expected);
  });
});
