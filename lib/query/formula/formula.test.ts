import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileFormula, compileFormulaSource } from "./compile";
import { FormulaError, type FormulaNode, parseFormula } from "./parse";
import { formulaTree } from "@/test/support/formula-arbitrary";
import { applyFormulaSteps, planFormulaMetrics } from "./plan";

const FIELDS = new Set(["revenue", "cost", "orders", "name", "flag"]);
const ROW = { revenue: 200, cost: 150, orders: 4, name: "Boston", flag: true };
const evaluate = (source: string, row: Record<string, unknown> = ROW) => compileFormulaSource(source, FIELDS)(row);

describe("formula evaluation", () => {
  it.each([
    ["1 + 2 * 3", 7],
    ["(1 + 2) * 3", 9],
    ["2 ** 3 ** 2", 512],
    ["-2 ** 2", -4],
    ["7 // 2", 3],
    ["-7 // 2", -4],
    ["-7 % 3", 2],
    ["(revenue - cost) / revenue", 0.25],
    ["revenue / orders if orders > 0 else 0", 50],
    ["'high' if revenue > 100 and not flag == false else 'low'", "high"],
    ["1 if orders > 10 else 2 if orders > 3 else 3", 2],
    ["orders >= 4 or nope_is_not_evaluated", true],
    ["abs(cost - revenue)", 50],
    ["round(2.5)", 3],
    ["round(-2.5)", -3],
    ["round(revenue / 3, 2)", 66.67],
    ["round(1234, -2)", 1200],
    ["float('1.5') + int('7')", 8.5],
    ["int(-3.9)", -3],
    ["len(name)", 6],
    ["min(revenue, cost, 300)", 150],
    ["max('a', 'c', 'b')", "c"],
    ["name + ' MA'", "Boston MA"],
    ["None", null],
    ["True and 3", 3],
  ])("%s = %j", (source, expected) => {
    const known = new Set([...FIELDS, "nope_is_not_evaluated"]);
    expect(compileFormulaSource(source, known)(ROW)).toEqual(expected);
  });

  it.each([
    "revenue / 0",
    "revenue // 0",
    "revenue % 0",
    "revenue + name",
    "name * 2",
    "-name",
    "len(revenue)",
    "abs('x')",
    "min(1, 'a')",
    "max(1, null)",
    "float('12abc')",
    "10 ** 400",
    "revenue < name",
    "round(1.5, 0.5)",
  ])("%s gives null instead of failing", (source) => {
    expect(evaluate(source)).toBeNull();
  });

  it("reads missing and non-scalar cells as null", () => {
    expect(evaluate("revenue * 2", {})).toBeNull();
    expect(evaluate("revenue * 2", { revenue: { valueOf: () => 3 } })).toBeNull();
    expect(evaluate("revenue * 2", { revenue: Number.NaN })).toBeNull();
  });

  it("cannot reach prototypes: __proto__ and constructor are unknown fields, and never read through", () => {
    expect(() => evaluate("__proto__")).toThrow(/unknown field '__proto__'/);
    expect(() => evaluate("constructor")).toThrow(/unknown field 'constructor'/);
    expect(() => evaluate("revenue.constructor")).toThrow(FormulaError);
    expect(() => evaluate("toString()")).toThrow(/unknown function 'toString'/);
    const known = new Set(["constructor", "__proto__"]);
    expect(compileFormulaSource("constructor", known)({})).toBeNull();
    expect(compileFormulaSource("__proto__", known)({})).toBeNull();
  });
});

describe("formula errors", () => {
  it.each([
    ["1 +", "unexpected end of expression", 3],
    ["(1 + 2", "expected ')' but found end of expression", 6],
    ["1 if 2", "expected 'else' but found end of expression", 6],
    ["1 < 2 < 3", "chained comparisons are not supported; combine them with 'and'", 6],
    ["revenue $ 2", "unexpected character '$'", 8],
    ["'open", "unterminated string", 0],
    ["round()", "round() takes 1 or 2 arguments, got 0", 0],
    ["abs(1, 2)", "abs() takes 1 argument, got 2", 0],
    ["eval('x')", "unknown function 'eval'; available: abs, round, float, int, len, min, max", 0],
    ["2abc", "invalid number '2a'", 0],
    ["1 2", "unexpected '2'", 2],
  ])("%s: %s at %d", (source, reason, position) => {
    try {
      parseFormula(source);
      throw new Error("expected a FormulaError");
    } catch (error) {
      expect(error).toBeInstanceOf(FormulaError);
      expect((error as FormulaError).reason).toBe(reason);
      expect((error as FormulaError).position).toBe(position);
    }
  });

  it("rejects deep nesting and huge expressions cleanly", () => {
    expect(() => parseFormula(`${"(".repeat(10_000)}1${")".repeat(10_000)}`)).toThrow(/longer than/);
    expect(() => parseFormula(`${"(".repeat(100)}1${")".repeat(100)}`)).toThrow(/nested deeper than 64/);
    expect(() => parseFormula("-".repeat(500) + "1")).toThrow(/nested deeper/);
    expect(() => parseFormula("not ".repeat(500) + "1")).toThrow(/nested deeper/);
    expect(() => parseFormula("1 if 1 else ".repeat(200) + "1")).toThrow(/nested deeper/);
    expect(() => parseFormula("1+".repeat(400_000) + "1")).toThrow(/longer than 10000/);
    // Long but flat chains are fine.
    expect(compileFormulaSource("1+".repeat(4000) + "1", FIELDS)({})).toBe(4001);
  });
});

describe("formula planning", () => {
  it("orders metrics by dependency and fills each row", () => {
    const { steps, errors } = planFormulaMetrics(
      [
        { id: "share", expression: "margin / total" },
        { id: "margin", expression: "revenue - cost" },
        { id: "total", expression: "revenue" },
      ],
      new Set(["revenue", "cost"]),
    );
    expect(errors).toEqual([]);
    expect(steps.map((s) => s.id)).toEqual(["margin", "total", "share"]);
    const rows: Record<string, unknown>[] = [{ revenue: 200, cost: 150 }, { revenue: 0, cost: 0 }];
    applyFormulaSteps(rows, steps);
    expect(rows).toEqual([
      { revenue: 200, cost: 150, margin: 50, total: 200, share: 0.25 },
      { revenue: 0, cost: 0, margin: 0, total: 0, share: null },
    ]);
  });

  it("reports cycles, self references, unknown ids and syntax errors with positions", () => {
    const { steps, errors } = planFormulaMetrics(
      [
        { id: "a", expression: "b + 1" },
        { id: "b", expression: "1 + a" },
        { id: "c", expression: "c" },
        { id: "d", expression: "revenue + ghost" },
        { id: "e", expression: "revenue +" },
        { id: "ok", expression: "revenue * 2" },
      ],
      new Set(["revenue"]),
    );
    expect(steps.map((s) => s.id)).toEqual(["ok"]);
    expect(errors).toEqual(
      expect.arrayContaining([
        { metricId: "a", position: 0, message: "metrics depend on each other in a cycle: a -> b -> a" },
        { metricId: "c", position: 0, message: "metrics depend on each other in a cycle: c -> c" },
        { metricId: "d", position: 10, message: "unknown field 'ghost'" },
        { metricId: "e", position: 9, message: "unexpected end of expression" },
      ]),
    );
  });
});

// ---------------------------------------------------------------- properties

const fieldName = fc.constantFrom(...FIELDS);
const tree = formulaTree({
  leaf: fc.oneof(
    fc.integer({ min: 0, max: 1000 }).map((value): FormulaNode => ({ type: "literal", value, at: 0 })),
    fc.constantFrom<FormulaNode>({ type: "literal", value: true, at: 0 }, { type: "literal", value: null, at: 0 }, { type: "literal", value: "a'b", at: 0 }),
    fieldName.map((name): FormulaNode => ({ type: "field", name, at: 0 })),
  ),
  // What print() writes must parse back to the same tree: no unary plus, no float/int/len/round.
  unary: ["-", "not"],
  calls: ["abs"],
});

/** Fully parenthesized text of a tree: parsing it must give the same tree back. */
function print(node: FormulaNode): string {
  switch (node.type) {
    case "literal":
      return node.value === null ? "null" : typeof node.value === "string" ? `'${node.value.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'` : String(node.value);
    case "field":
      return node.name;
    case "unary":
      return `(${node.op === "not" ? "not " : node.op}${print(node.operand)})`;
    case "binary":
      return `(${print(node.left)} ${node.op} ${print(node.right)})`;
    case "conditional":
      return `(${print(node.then)} if ${print(node.test)} else ${print(node.otherwise)})`;
    case "call":
      return `${node.name}(${node.args.map(print).join(", ")})`;
  }
}

const withoutPositions = (node: FormulaNode): unknown => JSON.parse(JSON.stringify(node, (key, value) => (key === "at" ? undefined : value)));
const cell = fc.oneof(fc.double(), fc.integer(), fc.string({ maxLength: 5 }), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.object({ maxDepth: 1 }));

describe("formula properties", () => {
  it("parsing any text either gives a tree or a FormulaError with a position inside the text", () => {
    const alphabet = fc.constantFrom(..."abc_01.9 ()+-*/%<>=!,'\"\\ifelsenotandor".split(""));
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 60 }), fc.string({ unit: alphabet, maxLength: 60 })), (text) => {
        try {
          parseFormula(text);
        } catch (error) {
          expect(error).toBeInstanceOf(FormulaError);
          expect((error as FormulaError).position).toBeGreaterThanOrEqual(0);
          expect((error as FormulaError).position).toBeLessThanOrEqual(text.length);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("printing a tree and parsing it back gives the same tree", () => {
    fc.assert(
      fc.property(tree, (node) => {
        expect(withoutPositions(parseFormula(print(node)))).toEqual(withoutPositions(node));
      }),
      { numRuns: 500 },
    );
  });

  it("evaluating any formula on any row never throws and gives a JSON scalar", () => {
    fc.assert(
      fc.property(tree, fc.record({ revenue: cell, cost: cell, orders: cell, name: cell, flag: cell }, { requiredKeys: [] }), (node, row) => {
        const value = compileFormula(node, (name) => FIELDS.has(name))(row);
        expect(value === null || ["number", "string", "boolean"].includes(typeof value)).toBe(true);
        if (typeof value === "number") expect(Number.isFinite(value)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });

  it("arithmetic on finite numbers matches JavaScript", () => {
    const n = fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 });
    fc.assert(
      fc.property(n, n, n, (a, b, c) => {
        const row = { revenue: a, cost: b, orders: c };
        expect(evaluate("revenue + cost * orders", row)).toBe(a + b * c);
        expect(evaluate("revenue - cost", row)).toBe(a - b);
        expect(evaluate("revenue / cost", row)).toBe(Number.isFinite(a / b) ? a / b : null);
        // Not Math.max: for revenue 0 and cost -0 the formula's else branch gives -0, where Math.max gives +0.
        expect(evaluate("revenue if revenue > cost else cost", row)).toBe(a > b ? a : b);
      }),
    );
  });
});
