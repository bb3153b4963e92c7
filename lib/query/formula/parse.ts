/**
 * Formula metrics (SPEC §2.3 rule 2): a small Python-flavoured expression language.
 *
 *   expr       := or ("if" or "else" expr)?
 *   or         := and ("or" and)*
 *   and        := not ("and" not)*
 *   not        := "not" not | comparison
 *   comparison := sum (("==" | "!=" | "<" | "<=" | ">" | ">=") sum)?
 *   sum        := product (("+" | "-") product)*
 *   product    := unary (("*" | "/" | "//" | "%") unary)*
 *   unary      := ("-" | "+") unary | power
 *   power      := primary ("**" unary)?
 *   primary    := number | string | true | false | null | identifier | identifier "(" args ")" | "(" expr ")"
 *
 * Identifiers are dimension or metric ids; the only callable names are FUNCTIONS.
 * This file turns text into a tree; compile.ts turns the tree into closures.
 */

export const MAX_FORMULA_LENGTH = 10_000;
export const MAX_FORMULA_DEPTH = 64;

export const FUNCTIONS = ["abs", "round", "float", "int", "len", "min", "max"] as const;
export type FunctionName = (typeof FUNCTIONS)[number];

export type BinaryOperator = "+" | "-" | "*" | "/" | "//" | "%" | "**" | "==" | "!=" | "<" | "<=" | ">" | ">=" | "and" | "or";

/** Every node keeps its offset in the source so compile-time errors can point at it. */
export type FormulaNode =
  | { type: "literal"; value: number | string | boolean | null; at: number }
  | { type: "field"; name: string; at: number }
  | { type: "unary"; op: "-" | "+" | "not"; operand: FormulaNode; at: number }
  | { type: "binary"; op: BinaryOperator; left: FormulaNode; right: FormulaNode; at: number }
  | { type: "conditional"; test: FormulaNode; then: FormulaNode; otherwise: FormulaNode; at: number }
  | { type: "call"; name: FunctionName; args: FormulaNode[]; at: number };

export class FormulaError extends Error {
  constructor(
    /** The problem without its position, for reports that show the position separately. */
    readonly reason: string,
    /** 0-based offset into the expression. */
    readonly position: number,
  ) {
    super(`${reason} (at character ${position + 1})`);
    this.name = "FormulaError";
  }
}

type Token =
  | { kind: "number"; value: number; at: number }
  | { kind: "string"; value: string; at: number }
  | { kind: "name"; value: string; at: number }
  | { kind: "op"; value: string; at: number }
  | { kind: "end"; at: number };

const KEYWORDS = new Set(["and", "or", "not", "if", "else", "true", "false", "null", "True", "False", "None"]);
const FUNCTION_SET: ReadonlySet<string> = new Set(FUNCTIONS);
// Longest first, so "**" wins over "*" and "<=" over "<".
const OPERATORS = ["**", "//", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "<", ">", "(", ")", ","];

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i];
    if (ch === " " || ch === "\t" || ch === "\n" || ch === "\r") {
      i++;
      continue;
    }
    const start = i;
    if (/[0-9.]/.test(ch)) {
      const match = /^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?/.exec(source.slice(i, i + 400));
      if (!match) throw new FormulaError(`unexpected '${ch}'`, i);
      i += match[0].length;
      if (i < source.length && /[A-Za-z_]/.test(source[i])) throw new FormulaError(`invalid number '${source.slice(start, i + 1)}'`, start);
      tokens.push({ kind: "number", value: Number(match[0]), at: start });
      continue;
    }
    if (/[A-Za-z_]/.test(ch)) {
      while (i < source.length && /[A-Za-z0-9_]/.test(source[i])) i++;
      tokens.push({ kind: "name", value: source.slice(start, i), at: start });
      continue;
    }
    if (ch === "'" || ch === '"') {
      let value = "";
      i++;
      for (;;) {
        if (i >= source.length) throw new FormulaError("unterminated string", start);
        const c = source[i];
        if (c === ch) break;
        if (c === "\\") {
          const next = source[i + 1];
          const escapes: Record<string, string> = { n: "\n", t: "\t", "\\": "\\", "'": "'", '"': '"' };
          if (next === undefined || !Object.hasOwn(escapes, next)) throw new FormulaError("invalid escape in string", i);
          value += escapes[next];
          i += 2;
          continue;
        }
        value += c;
        i++;
      }
      i++;
      tokens.push({ kind: "string", value, at: start });
      continue;
    }
    const op = OPERATORS.find((o) => source.startsWith(o, i));
    if (!op) throw new FormulaError(`unexpected character '${ch}'`, i);
    i += op.length;
    tokens.push({ kind: "op", value: op, at: start });
  }
  tokens.push({ kind: "end", at: source.length });
  return tokens;
}

/** Parses one expression to a tree, or throws a FormulaError with the offending position. */
export function parseFormula(source: string): FormulaNode {
  if (source.length > MAX_FORMULA_LENGTH) throw new FormulaError(`expression is longer than ${MAX_FORMULA_LENGTH} characters`, MAX_FORMULA_LENGTH);
  const tokens = tokenize(source);
  let index = 0;
  let depth = 0;

  const peek = () => tokens[index];
  const isOp = (value: string) => {
    const t = tokens[index];
    return t.kind === "op" && t.value === value;
  };
  const isWord = (value: string) => {
    const t = tokens[index];
    return t.kind === "name" && t.value === value;
  };
  const describe = (t: Token) => (t.kind === "end" ? "end of expression" : `'${t.kind === "string" ? JSON.stringify(t.value) : t.value}'`);
  const expectOp = (value: string) => {
    if (!isOp(value)) throw new FormulaError(`expected '${value}' but found ${describe(peek())}`, peek().at);
    index++;
  };
  // Every recursive production goes through here, so deep nesting fails cleanly instead of overflowing the stack.
  const nested = <T>(at: number, parse: () => T): T => {
    if (++depth > MAX_FORMULA_DEPTH) throw new FormulaError(`expression is nested deeper than ${MAX_FORMULA_DEPTH} levels`, at);
    try {
      return parse();
    } finally {
      depth--;
    }
  };

  const expression = (): FormulaNode =>
    nested(peek().at, () => {
      const value = or();
      if (!isWord("if")) return value;
      const at = peek().at;
      index++;
      const test = or();
      if (!isWord("else")) throw new FormulaError(`expected 'else' but found ${describe(peek())}`, peek().at);
      index++;
      const otherwise = expression();
      return { type: "conditional", test, then: value, otherwise, at };
    });

  const leftAssociative = (ops: readonly string[], words: boolean, next: () => FormulaNode) => (): FormulaNode => {
    let left = next();
    for (;;) {
      const t = peek();
      const matches = words ? t.kind === "name" && ops.includes(t.value) : t.kind === "op" && ops.includes(t.value);
      if (!matches) return left;
      index++;
      const right = next();
      left = { type: "binary", op: (t as { value: string }).value as BinaryOperator, left, right, at: t.at };
    }
  };

  const not = (): FormulaNode => {
    if (!isWord("not")) return comparison();
    const at = peek().at;
    index++;
    return nested(at, () => ({ type: "unary", op: "not", operand: not(), at }));
  };
  const and = leftAssociative(["and"], true, not);
  const or = leftAssociative(["or"], true, and);

  const comparison = (): FormulaNode => {
    const left = sum();
    const t = peek();
    if (t.kind !== "op" || !["==", "!=", "<", "<=", ">", ">="].includes(t.value)) return left;
    index++;
    const right = sum();
    const after = peek();
    if (after.kind === "op" && ["==", "!=", "<", "<=", ">", ">="].includes(after.value)) {
      throw new FormulaError("chained comparisons are not supported; combine them with 'and'", after.at);
    }
    return { type: "binary", op: t.value as BinaryOperator, left, right, at: t.at };
  };

  const unary = (): FormulaNode => {
    const t = peek();
    if (t.kind === "op" && (t.value === "-" || t.value === "+")) {
      index++;
      return nested(t.at, () => ({ type: "unary", op: t.value as "-" | "+", operand: unary(), at: t.at }));
    }
    return power();
  };
  const product = leftAssociative(["*", "/", "//", "%"], false, unary);
  const sum = leftAssociative(["+", "-"], false, product);

  const power = (): FormulaNode => {
    const base = primary();
    if (!isOp("**")) return base;
    const at = peek().at;
    index++;
    return { type: "binary", op: "**", left: base, right: nested(at, unary), at };
  };

  const primary = (): FormulaNode => {
    const t = peek();
    index++;
    switch (t.kind) {
      case "number":
        return { type: "literal", value: t.value, at: t.at };
      case "string":
        return { type: "literal", value: t.value, at: t.at };
      case "name": {
        if (t.value === "true" || t.value === "True") return { type: "literal", value: true, at: t.at };
        if (t.value === "false" || t.value === "False") return { type: "literal", value: false, at: t.at };
        if (t.value === "null" || t.value === "None") return { type: "literal", value: null, at: t.at };
        if (KEYWORDS.has(t.value)) throw new FormulaError(`unexpected '${t.value}'`, t.at);
        if (!isOp("(")) return { type: "field", name: t.value, at: t.at };
        if (!FUNCTION_SET.has(t.value)) throw new FormulaError(`unknown function '${t.value}'; available: ${FUNCTIONS.join(", ")}`, t.at);
        index++;
        const args: FormulaNode[] = [];
        if (!isOp(")")) {
          do args.push(expression());
          while (isOp(",") && ++index);
        }
        expectOp(")");
        checkArity(t.value as FunctionName, args.length, t.at);
        return { type: "call", name: t.value as FunctionName, args, at: t.at };
      }
      case "op":
        if (t.value === "(") {
          const inner = expression();
          expectOp(")");
          return inner;
        }
        throw new FormulaError(`unexpected ${describe(t)}`, t.at);
      case "end":
        throw new FormulaError("unexpected end of expression", t.at);
    }
  };

  const tree = expression();
  if (peek().kind !== "end") throw new FormulaError(`unexpected ${describe(peek())}`, peek().at);
  return tree;
}

const ARITY: Record<FunctionName, [number, number]> = {
  abs: [1, 1], round: [1, 2], float: [1, 1], int: [1, 1], len: [1, 1], min: [1, 32], max: [1, 32],
};

function checkArity(name: FunctionName, count: number, at: number): void {
  const [low, high] = ARITY[name];
  if (count < low || count > high) {
    const expected = low === high ? `${low}` : high >= 32 ? `at least ${low}` : `${low} or ${high}`;
    throw new FormulaError(`${name}() takes ${expected} argument${high === 1 ? "" : "s"}, got ${count}`, at);
  }
}

/** The field ids a tree reads, each with its first position. */
export function formulaFields(node: FormulaNode, found = new Map<string, number>()): Map<string, number> {
  switch (node.type) {
    case "field":
      if (!found.has(node.name)) found.set(node.name, node.at);
      break;
    case "unary":
      formulaFields(node.operand, found);
      break;
    case "binary":
      formulaFields(node.left, found);
      formulaFields(node.right, found);
      break;
    case "conditional":
      formulaFields(node.test, found);
      formulaFields(node.then, found);
      formulaFields(node.otherwise, found);
      break;
    case "call":
      for (const arg of node.args) formulaFields(arg, found);
      break;
    case "literal":
      break;
  }
  return found;
}
