import fc from "fast-check";
import type { FormulaNode } from "@/lib/query/formula/parse";

type UnaryOp = "-" | "+" | "not";
type OneArgCall = "abs" | "float" | "int" | "len" | "round";

/**
 * Random formula trees for property tests (parser round trips, the column evaluator against the row
 * interpreter). `leaf` gives the fields and literals; the operators and calls are the grammar's, narrowed
 * to `unary` and `calls` where a test can only use some (a printed tree must parse back to itself).
 */
export function formulaTree(options: { leaf: fc.Arbitrary<FormulaNode>; unary: readonly UnaryOp[]; calls: readonly OneArgCall[]; roundWithDigits?: boolean }): fc.Arbitrary<FormulaNode> {
  return fc.letrec<{ node: FormulaNode }>((tie) => ({
    node: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      options.leaf,
      fc.record({ type: fc.constant("unary" as const), op: fc.constantFrom(...options.unary), operand: tie("node"), at: fc.constant(0) }),
      fc.record({
        type: fc.constant("binary" as const),
        op: fc.constantFrom("+", "-", "*", "/", "//", "%", "**", "==", "!=", "<", "<=", ">", ">=", "and", "or"),
        left: tie("node"),
        right: tie("node"),
        at: fc.constant(0),
      }) as fc.Arbitrary<FormulaNode>,
      fc.record({ type: fc.constant("conditional" as const), test: tie("node"), then: tie("node"), otherwise: tie("node"), at: fc.constant(0) }),
      fc.record({ type: fc.constant("call" as const), name: fc.constantFrom(...options.calls), args: tie("node").map((arg) => [arg]), at: fc.constant(0) }),
      ...(options.roundWithDigits
        ? [
            fc.record({
              type: fc.constant("call" as const),
              name: fc.constant("round" as const),
              args: fc.tuple(tie("node"), fc.integer({ min: -3, max: 3 }).map((value): FormulaNode => ({ type: "literal", value, at: 0 }))).map((args) => [...args]),
              at: fc.constant(0),
            }),
          ]
        : []),
      fc.record({ type: fc.constant("call" as const), name: fc.constantFrom("min" as const, "max" as const), args: fc.array(tie("node"), { minLength: 1, maxLength: 3 }), at: fc.constant(0) }),
    ),
  })).node;
}
