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
      return field(name);
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
      const constant = node.right.type === "literal" && typeof node.right.value === "number" ? node.right.value : null;
      if (node.left.type === "field" && node.right.type === "field" && Object.hasOwn(FIELD_WITH_FIELD, node.op)) {
        return FIELD_WITH_FIELD[node.op as "+" | "-" | "*" | "/"](node.left.name, node.right.name);
      }
      if (node.left.type === "field" && constant !== null && Object.hasOwn(FIELD_WITH_CONSTANT, node.op)) {
        return FIELD_WITH_CONSTANT[node.op as "<" | "<=" | ">" | ">="](node.left.name, constant);
      }
      if (constant !== null && Object.hasOwn(NUMERIC_WITH_CONSTANT, node.op)) return NUMERIC_WITH_CONSTANT[node.op as NumericOperator](left, constant);
      if (node.right.type === "literal" && (node.op === "==" || node.op === "!=")) {
        const k = node.right.value;
        return node.op === "==" ? (row) => left(row) === k : (row) => left(row) !== k;
      }
      return BINARY[node.op](left, right);
    }
    case "call": {
      const args = node.args.map((arg) => compileFormula(arg, isKnownField));
      const digits = node.args[1]?.type === "literal" ? node.args[1].value : undefined;
      if (node.name === "round" && typeof digits === "number" && Number.isInteger(digits) && Math.abs(digits) <= 15) {
        const value = args[0];
        const factor = 10 ** digits;
        return (row) => {
          const x = value(row);
          return typeof x === "number" ? finite((Math.sign(x) * Math.round(Math.abs(x) * factor)) / factor) : null;
        };
      }
      if (node.name === "round" && args.length === 2) {
        const [value, digits] = args;
        return (row) => roundTo(value(row), digits(row));
      }
      const fn = FUNCTION_IMPLS[node.name];
      if (args.length === 1) {
        const only = args[0];
        return (row) => fn([only(row)]);
      }
      return (row) => fn(args.map((arg) => arg(row)));
    }
  }
}

/** Reads one cell as a formula value. */
function field(name: string): Evaluate {
  return (row) => {
    const v = row[name];
    // No property of Object.prototype is a number, string or boolean, so only those need
    // the own-property check; inherited functions and objects read as null anyway.
    if (typeof v === "number") return Number.isFinite(v) ? v : null;
    if (typeof v === "string" || typeof v === "boolean") return Object.hasOwn(row, name) ? v : null;
    return null;
  };
}

/** Parses and compiles in one step; throws FormulaError. */
export function compileFormulaSource(source: string, knownFields: ReadonlySet<string>): CompiledFormula {
  return compileFormula(parseFormula(source), (name) => knownFields.has(name));
}

function truthy(value: FormulaValue): boolean {
  return value !== null && value !== false && value !== 0 && value !== "";
}

const finite = (n: number): FormulaValue => (Number.isFinite(n) ? n : null);

type Evaluate = CompiledFormula;
type NumericOperator = "+" | "-" | "*" | "/" | "//" | "%" | "**" | "<" | "<=" | ">" | ">=";

/*
 * One closure literal per operator, written out rather than built from a shared helper,
 * so V8 keeps each operator's call sites monomorphic; this is what keeps the interpreter
 * within a small factor of hand-written JavaScript (bench/formula.ts).
 */
const BINARY: Record<Exclude<BinaryOperator, "and" | "or">, (l: Evaluate, r: Evaluate) => Evaluate> = {
  "+": (l, r) => (row) => {
    const a = l(row), b = r(row);
    if (typeof a === "number" && typeof b === "number") return finite(a + b);
    return typeof a === "string" && typeof b === "string" ? a + b : null;
  },
  "-": (l, r) => (row) => { const a = l(row), b = r(row); return typeof a === "number" && typeof b === "number" ? finite(a - b) : null; },
  "*": (l, r) => (row) => { const a = l(row), b = r(row); return typeof a === "number" && typeof b === "number" ? finite(a * b) : null; },
  // Division by zero gives NaN or Infinity, which finite() turns into null.
  "/": (l, r) => (row) => { const a = l(row), b = r(row); return typeof a === "number" && typeof b === "number" ? finite(a / b) : null; },
  "//": (l, r) => (row) => { const a = l(row), b = r(row); return typeof a === "number" && typeof b === "number" ? finite(Math.floor(a / b)) : null; },
  // Python's modulo takes the divisor's sign.
  "%": (l, r) => (row) => { const a = l(row), b = r(row); return typeof a === "number" && typeof b === "number" ? finite(((a % b) + b) % b) : null; },
  "**": (l, r) => (row) => { const a = l(row), b = r(row); return typeof a === "number" && typeof b === "number" ? finite(a ** b) : null; },
  "==": (l, r) => (row) => l(row) === r(row),
  "!=": (l, r) => (row) => l(row) !== r(row),
  "<": (l, r) => (row) => { const a = l(row), b = r(row); return comparable(a, b) ? (a as number) < (b as number) : null; },
  "<=": (l, r) => (row) => { const a = l(row), b = r(row); return comparable(a, b) ? (a as number) <= (b as number) : null; },
  ">": (l, r) => (row) => { const a = l(row), b = r(row); return comparable(a, b) ? (a as number) > (b as number) : null; },
  ">=": (l, r) => (row) => { const a = l(row), b = r(row); return comparable(a, b) ? (a as number) >= (b as number) : null; },
};

/** The same operators with a number literal on the right (`x * 100`, `x > 0`), which saves a call per row. */
const NUMERIC_WITH_CONSTANT: Record<NumericOperator, (l: Evaluate, k: number) => Evaluate> = {
  "+": (l, k) => (row) => { const a = l(row); return typeof a === "number" ? finite(a + k) : null; },
  "-": (l, k) => (row) => { const a = l(row); return typeof a === "number" ? finite(a - k) : null; },
  "*": (l, k) => (row) => { const a = l(row); return typeof a === "number" ? finite(a * k) : null; },
  "/": (l, k) => (row) => { const a = l(row); return typeof a === "number" ? finite(a / k) : null; },
  "//": (l, k) => (row) => { const a = l(row); return typeof a === "number" ? finite(Math.floor(a / k)) : null; },
  "%": (l, k) => (row) => { const a = l(row); return typeof a === "number" ? finite(((a % k) + k) % k) : null; },
  "**": (l, k) => (row) => { const a = l(row); return typeof a === "number" ? finite(a ** k) : null; },
  "<": (l, k) => (row) => { const a = l(row); return typeof a === "number" ? a < k : null; },
  "<=": (l, k) => (row) => { const a = l(row); return typeof a === "number" ? a <= k : null; },
  ">": (l, k) => (row) => { const a = l(row); return typeof a === "number" ? a > k : null; },
  ">=": (l, k) => (row) => { const a = l(row); return typeof a === "number" ? a >= k : null; },
};

/*
 * Fused forms for the commonest shapes, reading the row directly. Only finite numbers
 * count as numbers: no property of Object.prototype is a number, so these reads need
 * no own-property check. For + - * a non-finite operand always gives a non-finite
 * result, which finite() turns into null as the unfused path would.
 */
const FIELD_WITH_FIELD: Record<"+" | "-" | "*" | "/", (x: string, y: string) => Evaluate> = {
  "+": (x, y) => (row) => { const a = row[x], b = row[y]; return typeof a === "number" && typeof b === "number" ? finite(a + b)
    : typeof a === "string" && typeof b === "string" && Object.hasOwn(row, x) && Object.hasOwn(row, y) ? a + b : null; },
  "-": (x, y) => (row) => { const a = row[x], b = row[y]; return typeof a === "number" && typeof b === "number" ? finite(a - b) : null; },
  "*": (x, y) => (row) => { const a = row[x], b = row[y]; return typeof a === "number" && typeof b === "number" ? finite(a * b) : null; },
  "/": (x, y) => (row) => { const a = row[x], b = row[y]; return Number.isFinite(a) && Number.isFinite(b) ? finite((a as number) / (b as number)) : null; },
};

const FIELD_WITH_CONSTANT: Record<"<" | "<=" | ">" | ">=", (x: string, k: number) => Evaluate> = {
  "<": (x, k) => (row) => { const a = row[x]; return Number.isFinite(a) ? (a as number) < k : null; },
  "<=": (x, k) => (row) => { const a = row[x]; return Number.isFinite(a) ? (a as number) <= k : null; },
  ">": (x, k) => (row) => { const a = row[x]; return Number.isFinite(a) ? (a as number) > k : null; },
  ">=": (x, k) => (row) => { const a = row[x]; return Number.isFinite(a) ? (a as number) >= k : null; },
};

function comparable(a: FormulaValue, b: FormulaValue): boolean {
  return (typeof a === "number" && typeof b === "number") || (typeof a === "string" && typeof b === "string");
}

/** Half away from zero, to `digits` decimals (negative digits round to tens, hundreds...). */
function roundTo(x: FormulaValue, digits: FormulaValue): FormulaValue {
  if (typeof x !== "number" || typeof digits !== "number" || !Number.isInteger(digits) || Math.abs(digits) > 15) return null;
  const factor = 10 ** digits;
  return finite((Math.sign(x) * Math.round(Math.abs(x) * factor)) / factor);
}

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
  round: ([x, digits = 0]) => roundTo(x, digits),
  float: ([x]) => toNumber(x),
  int: ([x]) => {
    const n = toNumber(x);
    return n === null ? null : Math.trunc(n);
  },
  len: ([x]) => (typeof x === "string" ? x.length : null),
  min: (args) => extreme(args, false),
  max: (args) => extreme(args, true),
};
