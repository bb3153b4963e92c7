import { type BinaryOperator, type FormulaNode, FormulaError, type FunctionName, parseFormula } from "./parse";

/** What a formula computes and reads: JSON scalars. Anything else in a row reads as null. */
export type FormulaValue = number | string | boolean | null;
export type FormulaRow = Readonly<Record<string, unknown>>;
export type CompiledFormula = (row: FormulaRow) => FormulaValue;

/**
 * Turns a tree into nested closures, once; evaluating a row is then a chain of plain
 * function calls with no tree walk, no eval and no dynamic property access beyond
 * own-property reads of the known field ids. Every failure mode of a cell (division by
 * zero, wrong types, non-finite results) yields null for that cell, never an exception.
 */
export function compileFormula(node: FormulaNode, isKnownField: (name: string) => boolean): CompiledFormula {
  switch (node.type) {
    case "literal": {
      const value = node.value;
      return () => value;
    }
    case "field": {
      const name = node.name;
      if (!isKnownField(name)) throw new FormulaError(`unknown field '${name}'`, node.at);
      return (row) => (Object.hasOwn(row, name) ? scalar(row[name]) : null);
    }
    case "unary": {
      const operand = compileFormula(node.operand, isKnownField);
      if (node.op === "not") return (row) => !truthy(operand(row));
      if (node.op === "-") {
        return (row) => {
          const v = operand(row);
          return typeof v === "number" ? -v : null;
        };
      }
      return (row) => {
        const v = operand(row);
        return typeof v === "number" ? v : null;
      };
    }
    case "conditional": {
      const test = compileFormula(node.test, isKnownField);
      const then = compileFormula(node.then, isKnownField);
      const otherwise = compileFormula(node.otherwise, isKnownField);
      return (row) => (truthy(test(row)) ? then(row) : otherwise(row));
    }
    case "binary": {
      const left = compileFormula(node.left, isKnownField);
      const right = compileFormula(node.right, isKnownField);
      if (node.op === "and") return (row) => { const l = left(row); return truthy(l) ? right(row) : l; };
      if (node.op === "or") return (row) => { const l = left(row); return truthy(l) ? l : right(row); };
      const apply = BINARY[node.op];
      return (row) => apply(left(row), right(row));
    }
    case "call": {
      const args = node.args.map((arg) => compileFormula(arg, isKnownField));
      const fn = FUNCTION_IMPLS[node.name];
      if (args.length === 1) {
        const only = args[0];
        return (row) => fn([only(row)]);
      }
      return (row) => fn(args.map((arg) => arg(row)));
    }
  }
}

/** Parses and compiles in one step; throws FormulaError. */
export function compileFormulaSource(source: string, knownFields: ReadonlySet<string>): CompiledFormula {
  return compileFormula(parseFormula(source), (name) => knownFields.has(name));
}

function scalar(value: unknown): FormulaValue {
  switch (typeof value) {
    case "number":
      return Number.isFinite(value) ? value : null;
    case "string":
    case "boolean":
      return value;
    default:
      return null;
  }
}

function truthy(value: FormulaValue): boolean {
  return value !== null && value !== false && value !== 0 && value !== "";
}

const finite = (n: number): FormulaValue => (Number.isFinite(n) ? n : null);

type Binary = (a: FormulaValue, b: FormulaValue) => FormulaValue;

const numeric = (op: (a: number, b: number) => number): Binary => (a, b) =>
  typeof a === "number" && typeof b === "number" ? finite(op(a, b)) : null;

const ordered = (op: (a: number | string, b: number | string) => boolean): Binary => (a, b) =>
  (typeof a === "number" && typeof b === "number") || (typeof a === "string" && typeof b === "string") ? op(a, b) : null;

const BINARY: Record<Exclude<BinaryOperator, "and" | "or">, Binary> = {
  "+": (a, b) => {
    if (typeof a === "number" && typeof b === "number") return finite(a + b);
    if (typeof a === "string" && typeof b === "string") return a + b;
    return null;
  },
  "-": numeric((a, b) => a - b),
  "*": numeric((a, b) => a * b),
  // Division by zero gives NaN or Infinity, which finite() turns into null.
  "/": numeric((a, b) => a / b),
  "//": numeric((a, b) => Math.floor(a / b)),
  // Python's modulo takes the divisor's sign.
  "%": numeric((a, b) => ((a % b) + b) % b),
  "**": numeric((a, b) => a ** b),
  "==": (a, b) => a === b,
  "!=": (a, b) => a !== b,
  "<": ordered((a, b) => a < b),
  "<=": ordered((a, b) => a <= b),
  ">": ordered((a, b) => a > b),
  ">=": ordered((a, b) => a >= b),
};

function toNumber(value: FormulaValue): number | null {
  if (typeof value === "number") return value;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "string" && /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/.test(value)) return Number(value);
  return null;
}

/** min/max over numbers or over strings; a null or a mix of types gives null. */
function extreme(values: FormulaValue[], wantGreater: boolean): FormulaValue {
  let best = values[0];
  if (typeof best !== "number" && typeof best !== "string") return null;
  for (let i = 1; i < values.length; i++) {
    const v = values[i];
    if (typeof v !== typeof best) return null;
    // Same primitive type on both sides, so the comparison is numeric or lexicographic.
    if (wantGreater ? (v as number) > (best as number) : (v as number) < (best as number)) best = v;
  }
  return best;
}

const FUNCTION_IMPLS: Record<FunctionName, (args: FormulaValue[]) => FormulaValue> = {
  abs: ([x]) => (typeof x === "number" ? Math.abs(x) : null),
  // Half away from zero, to `digits` decimals (negative digits round to tens, hundreds...).
  round: ([x, digits = 0]) => {
    if (typeof x !== "number" || typeof digits !== "number" || !Number.isInteger(digits) || Math.abs(digits) > 15) return null;
    const factor = 10 ** digits;
    return finite((Math.sign(x) * Math.round(Math.abs(x) * factor)) / factor);
  },
  float: ([x]) => toNumber(x),
  int: ([x]) => {
    const n = toNumber(x);
    return n === null ? null : Math.trunc(n);
  },
  len: ([x]) => (typeof x === "string" ? x.length : null),
  min: (args) => extreme(args, false),
  max: (args) => extreme(args, true),
};
