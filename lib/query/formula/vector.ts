import { type CompiledFormula, type FormulaRow, type FormulaValue, compileFormula } from "./compile";
import { type BinaryOperator, type FormulaNode, parseFormula } from "./parse";

/*
 * Column-at-a-time evaluation of formula metrics (docs/performance.md, "Formulas").
 *
 * Rows are taken CHUNK_ROWS at a time. Each field is read once per chunk into a typed
 * array, and each node of the tree is one closure that runs one tight loop over the
 * chunk into a buffer it owns: no per-row closure calls, no boxing of intermediate
 * numbers, no per-row allocation. The type of a column is decided per chunk, not per
 * row; any shape without a typed loop here falls back to the row interpreter
 * (compile.ts) for that node and chunk, so the semantics are its semantics by
 * construction, and vector.test.ts checks the typed loops against it on random input.
 *
 * Representations:
 * - "num": Float64Array where NaN is null. Formula numbers are never NaN (every
 *   arithmetic result and every field read goes through a finiteness check), so NaN is
 *   free to mean null; ±Infinity can only come from a literal such as 1e999 and is kept.
 * - "bool": Uint8Array of 0 (false), 1 (true), NULL_BOOL (null).
 * - "any": boxed FormulaValue[], for strings and mixed columns.
 * - "const": one value for every row of the chunk (literals and what folds from them).
 */

export const CHUNK_ROWS = 1024;
const NULL_BOOL = 2;

export type Vector =
  | { kind: "const"; value: FormulaValue }
  | { kind: "num"; data: Float64Array }
  | { kind: "bool"; data: Uint8Array }
  | { kind: "any"; data: FormulaValue[] };

export interface Chunk {
  rows: readonly FormulaRow[];
  start: number;
  length: number;
  /** Distinct for every chunk evaluated, so field reads can be shared within one chunk only. */
  generation: number;
}

export type ChunkEvaluator = (chunk: Chunk) => Vector;

interface Context {
  isKnownField: (name: string) => boolean;
  fields: Map<string, ChunkEvaluator>;
}

let generations = 0;

/**
 * Compiles a tree to a chunk evaluator. The tree must already have compiled with
 * compileFormula (which rejects unknown fields): the row interpreter is both the
 * reference semantics and the fallback here.
 */
export function compileNodeVector(node: FormulaNode, isKnownField: (name: string) => boolean): ChunkEvaluator {
  return compileNode(node, { isKnownField, fields: new Map() });
}

/** Parses and compiles in one step; throws FormulaError. */
export function compileFormulaSourceVector(source: string, knownFields: ReadonlySet<string>): ChunkEvaluator {
  const tree = parseFormula(source);
  const isKnownField = (name: string) => knownFields.has(name);
  compileFormula(tree, isKnownField);
  return compileNodeVector(tree, isKnownField);
}

export interface VectorStep {
  id: string;
  evaluateChunk: ChunkEvaluator;
}

/** Adds each step's value to every row, in step order, a chunk of rows at a time. */
export function applyVectorSteps(rows: Record<string, unknown>[], steps: readonly VectorStep[]): void {
  for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
    const length = Math.min(CHUNK_ROWS, rows.length - start);
    for (const step of steps) {
      // A new generation per step: a later step may read what an earlier one just wrote.
      const vector = step.evaluateChunk({ rows, start, length, generation: ++generations });
      writeColumn(vector, rows, start, length, step.id);
    }
  }
}

/** The whole column as plain values, one per row (used by tests and the bench). */
export function evaluateFormulaRows(evaluate: ChunkEvaluator, rows: readonly FormulaRow[]): { values: FormulaValue[]; kinds: Vector["kind"][] } {
  const values: FormulaValue[] = [];
  const kinds: Vector["kind"][] = [];
  for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
    const length = Math.min(CHUNK_ROWS, rows.length - start);
    const vector = evaluate({ rows, start, length, generation: ++generations });
    kinds.push(vector.kind);
    for (let i = 0; i < length; i++) values.push(valueAt(vector, i));
  }
  return { values, kinds };
}

function writeColumn(vector: Vector, rows: Record<string, unknown>[], start: number, length: number, id: string): void {
  switch (vector.kind) {
    case "num": {
      const data = vector.data;
      for (let i = 0; i < length; i++) {
        const x = data[i];
        rows[start + i][id] = x === x ? x : null;
      }
      return;
    }
    case "bool": {
      const data = vector.data;
      for (let i = 0; i < length; i++) {
        const b = data[i];
        rows[start + i][id] = b === NULL_BOOL ? null : b === 1;
      }
      return;
    }
    case "const":
      for (let i = 0; i < length; i++) rows[start + i][id] = vector.value;
      return;
    case "any": {
      const data = vector.data;
      for (let i = 0; i < length; i++) rows[start + i][id] = data[i];
      return;
    }
  }
}

function valueAt(vector: Vector, i: number): FormulaValue {
  switch (vector.kind) {
    case "num": {
      const x = vector.data[i];
      return x === x ? x : null;
    }
    case "bool": {
      const b = vector.data[i];
      return b === NULL_BOOL ? null : b === 1;
    }
    case "const":
      return vector.value;
    case "any":
      return vector.data[i];
  }
}

function compileNode(node: FormulaNode, context: Context): ChunkEvaluator {
  switch (node.type) {
    case "literal": {
      const vector: Vector = { kind: "const", value: node.value };
      return () => vector;
    }
    case "field": {
      let load = context.fields.get(node.name);
      if (!load) context.fields.set(node.name, (load = fieldColumn(node.name)));
      return load;
    }
    case "unary":
      return compileUnary(node.op, compileNode(node.operand, context), rowFallback(node, context));
    case "conditional": {
      const test = compileNode(node.test, context);
      const then = compileNode(node.then, context);
      const otherwise = compileNode(node.otherwise, context);
      const mask = new Uint8Array(CHUNK_ROWS);
      const scratch = new SelectScratch();
      return (chunk) => {
        const t = test(chunk);
        if (t.kind === "const") return truthy(t.value) ? then(chunk) : otherwise(chunk);
        truthMask(t, chunk.length, mask);
        // Formulas never fail and never have side effects, so computing both branches
        // for the whole chunk gives what choosing per row would.
        return select(mask, then(chunk), otherwise(chunk), chunk.length, scratch);
      };
    }
    case "binary": {
      const left = compileNode(node.left, context);
      const right = compileNode(node.right, context);
      const fallback = rowFallback(node, context);
      if (node.op === "and" || node.op === "or") return compileLogical(node.op, left, right);
      if ((node.op === "==" || node.op === "!=") && node.left.type === "field" && node.right.type === "literal" && typeof node.right.value === "string") {
        return fieldEqualsString(node.left.name, node.right.value, node.op === "!=");
      }
      return compileBinary(node.op, left, right, fallback);
    }
    case "call": {
      const args = node.args.map((arg) => compileNode(arg, context));
      return compileCall(node.name, args, rowFallback(node, context));
    }
  }
}

/** Reads one cell exactly as compile.ts field() does. */
function readCell(row: FormulaRow, name: string): FormulaValue {
  const v = row[name];
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (typeof v === "string" || typeof v === "boolean") return Object.hasOwn(row, name) ? v : null;
  return null;
}

/** One field's column for the current chunk, read once however often the formula names it. */
function fieldColumn(name: string): ChunkEvaluator {
  const numbers = new Float64Array(CHUNK_ROWS);
  const values: FormulaValue[] = new Array<FormulaValue>(CHUNK_ROWS).fill(null);
  const read = READERS[readerSlot(name)];
  let generation = -1;
  let loaded: Vector = { kind: "const", value: null };
  return (chunk) => {
    if (chunk.generation === generation) return loaded;
    generation = chunk.generation;
    const numeric = read(chunk.rows, chunk.start, chunk.length, name, numbers, values);
    return (loaded = numeric ? { kind: "num", data: numbers } : { kind: "any", data: values });
  };
}

/**
 * Reads a column into `numbers` (NaN for null; `v - v` is 0 only for a finite number, so
 * NaN and ±Infinity read as null, as in compile.ts field()) and returns true; at the first
 * string or boolean it reads the whole column into `values` instead and returns false.
 */
type ColumnReader = (rows: readonly FormulaRow[], start: number, length: number, name: string, numbers: Float64Array, values: FormulaValue[]) => boolean;

/*
 * The same reader written out READERS.length times. V8 keeps one inline cache per
 * property-read site in the source, and a site that reads many different names goes
 * megamorphic and is about twice as slow; spreading field names over the copies keeps the
 * read of `row[name]` monomorphic or nearly so. Identical bodies.
 */
const READERS: readonly ColumnReader[] = [
  (rows, start, length, name, numbers, values) => { for (let i = 0; i < length; i++) { const row = rows[start + i], v = row[name]; if (typeof v === "number") numbers[i] = v - v === 0 ? v : NaN; else if ((typeof v === "string" || typeof v === "boolean") && Object.hasOwn(row, name)) return boxColumn(rows, start, length, name, values); else numbers[i] = NaN; } return true; },
  (rows, start, length, name, numbers, values) => { for (let i = 0; i < length; i++) { const row = rows[start + i], v = row[name]; if (typeof v === "number") numbers[i] = v - v === 0 ? v : NaN; else if ((typeof v === "string" || typeof v === "boolean") && Object.hasOwn(row, name)) return boxColumn(rows, start, length, name, values); else numbers[i] = NaN; } return true; },
  (rows, start, length, name, numbers, values) => { for (let i = 0; i < length; i++) { const row = rows[start + i], v = row[name]; if (typeof v === "number") numbers[i] = v - v === 0 ? v : NaN; else if ((typeof v === "string" || typeof v === "boolean") && Object.hasOwn(row, name)) return boxColumn(rows, start, length, name, values); else numbers[i] = NaN; } return true; },
  (rows, start, length, name, numbers, values) => { for (let i = 0; i < length; i++) { const row = rows[start + i], v = row[name]; if (typeof v === "number") numbers[i] = v - v === 0 ? v : NaN; else if ((typeof v === "string" || typeof v === "boolean") && Object.hasOwn(row, name)) return boxColumn(rows, start, length, name, values); else numbers[i] = NaN; } return true; },
  (rows, start, length, name, numbers, values) => { for (let i = 0; i < length; i++) { const row = rows[start + i], v = row[name]; if (typeof v === "number") numbers[i] = v - v === 0 ? v : NaN; else if ((typeof v === "string" || typeof v === "boolean") && Object.hasOwn(row, name)) return boxColumn(rows, start, length, name, values); else numbers[i] = NaN; } return true; },
  (rows, start, length, name, numbers, values) => { for (let i = 0; i < length; i++) { const row = rows[start + i], v = row[name]; if (typeof v === "number") numbers[i] = v - v === 0 ? v : NaN; else if ((typeof v === "string" || typeof v === "boolean") && Object.hasOwn(row, name)) return boxColumn(rows, start, length, name, values); else numbers[i] = NaN; } return true; },
  (rows, start, length, name, numbers, values) => { for (let i = 0; i < length; i++) { const row = rows[start + i], v = row[name]; if (typeof v === "number") numbers[i] = v - v === 0 ? v : NaN; else if ((typeof v === "string" || typeof v === "boolean") && Object.hasOwn(row, name)) return boxColumn(rows, start, length, name, values); else numbers[i] = NaN; } return true; },
  (rows, start, length, name, numbers, values) => { for (let i = 0; i < length; i++) { const row = rows[start + i], v = row[name]; if (typeof v === "number") numbers[i] = v - v === 0 ? v : NaN; else if ((typeof v === "string" || typeof v === "boolean") && Object.hasOwn(row, name)) return boxColumn(rows, start, length, name, values); else numbers[i] = NaN; } return true; },
];

/**
 * Each field name always takes the same copy, chosen by a hash of the name: nothing to remember
 * per name (a process sees the names of every tenant's manifests), and two names of one formula
 * share a copy only by chance, which leaves that read polymorphic, not megamorphic.
 */
function readerSlot(name: string): number {
  let hash = 0;
  for (let i = 0; i < name.length; i++) hash = (Math.imul(hash, 31) + name.charCodeAt(i)) | 0;
  return (hash >>> 0) % READERS.length;
}

function boxColumn(rows: readonly FormulaRow[], start: number, length: number, name: string, values: FormulaValue[]): false {
  for (let i = 0; i < length; i++) values[i] = readCell(rows[start + i], name);
  return false;
}

/**
 * `field == 'text'` (or !=) straight from the rows, without boxing the column: a cell
 * equals the string only if it is that string and an own property (compile.ts field()).
 */
function fieldEqualsString(name: string, text: string, negate: boolean): ChunkEvaluator {
  const out = new Uint8Array(CHUNK_ROWS);
  const miss = negate ? 1 : 0;
  const hit = negate ? 0 : 1;
  return ({ rows, start, length }) => {
    for (let i = 0; i < length; i++) {
      const row = rows[start + i];
      out[i] = row[name] === text && Object.hasOwn(row, name) ? hit : miss;
    }
    return { kind: "bool", data: out };
  };
}

/** The row interpreter for one node over a chunk: the general path for shapes without a typed loop. */
function rowFallback(node: FormulaNode, context: Context): ChunkEvaluator {
  let evaluate: CompiledFormula | undefined;
  const out: FormulaValue[] = new Array<FormulaValue>(CHUNK_ROWS).fill(null);
  return (chunk) => {
    evaluate ??= compileFormula(node, context.isKnownField);
    const { rows, start, length } = chunk;
    for (let i = 0; i < length; i++) out[i] = evaluate(rows[start + i]);
    return { kind: "any", data: out };
  };
}

/**
 * Every child is constant, so the node is too: its value on any row of the chunk is its
 * value on all of them, and the row interpreter computes it with its own semantics.
 */
function folded(fallback: ChunkEvaluator, chunk: Chunk): Vector {
  return { kind: "const", value: (fallback({ ...chunk, length: 1 }) as { data: FormulaValue[] }).data[0] };
}

function truthy(value: FormulaValue): boolean {
  return value !== null && value !== false && value !== 0 && value !== "";
}

/** 1 where the value is truthy, else 0. */
function truthMask(vector: Vector, length: number, into: Uint8Array): void {
  switch (vector.kind) {
    case "num": {
      const data = vector.data;
      for (let i = 0; i < length; i++) {
        const x = data[i];
        into[i] = x === x && x !== 0 ? 1 : 0;
      }
      return;
    }
    case "bool": {
      const data = vector.data;
      for (let i = 0; i < length; i++) into[i] = data[i] === 1 ? 1 : 0;
      return;
    }
    case "const":
      into.fill(truthy(vector.value) ? 1 : 0, 0, length);
      return;
    case "any": {
      const data = vector.data;
      for (let i = 0; i < length; i++) into[i] = truthy(data[i]) ? 1 : 0;
      return;
    }
  }
}

/** The vector as numbers (a constant number or null broadcast into `buffer`), or null if it is not numeric. */
function numbers(vector: Vector, length: number, buffer: Float64Array): Float64Array | null {
  if (vector.kind === "num") return vector.data;
  if (vector.kind !== "const") return null;
  const v = vector.value;
  if (v === null) return buffer.fill(NaN, 0, length);
  return typeof v === "number" ? buffer.fill(v, 0, length) : null;
}

/** The vector as booleans (a constant boolean or null broadcast into `buffer`), or null if it is not boolean. */
function flags(vector: Vector, length: number, buffer: Uint8Array): Uint8Array | null {
  if (vector.kind === "bool") return vector.data;
  if (vector.kind !== "const") return null;
  const v = vector.value;
  if (v === null) return buffer.fill(NULL_BOOL, 0, length);
  return typeof v === "boolean" ? buffer.fill(v ? 1 : 0, 0, length) : null;
}

function boxed(vector: Vector, length: number, buffer: FormulaValue[]): FormulaValue[] {
  if (vector.kind === "any") return vector.data;
  for (let i = 0; i < length; i++) buffer[i] = valueAt(vector, i);
  return buffer;
}

class SelectScratch {
  readonly leftNumbers = new Float64Array(CHUNK_ROWS);
  readonly rightNumbers = new Float64Array(CHUNK_ROWS);
  readonly outNumbers = new Float64Array(CHUNK_ROWS);
  readonly leftFlags = new Uint8Array(CHUNK_ROWS);
  readonly rightFlags = new Uint8Array(CHUNK_ROWS);
  readonly outFlags = new Uint8Array(CHUNK_ROWS);
  readonly leftValues: FormulaValue[] = new Array<FormulaValue>(CHUNK_ROWS).fill(null);
  readonly rightValues: FormulaValue[] = new Array<FormulaValue>(CHUNK_ROWS).fill(null);
  readonly outValues: FormulaValue[] = new Array<FormulaValue>(CHUNK_ROWS).fill(null);
}

/** Row by row, `a` where the mask is 1, else `b`; typed when both sides have the same type. */
function select(mask: Uint8Array, a: Vector, b: Vector, length: number, s: SelectScratch): Vector {
  if (a.kind === "const" && b.kind === "const" && Object.is(a.value, b.value)) return a;
  const x = numbers(a, length, s.leftNumbers);
  const y = x && numbers(b, length, s.rightNumbers);
  if (x && y) {
    const out = s.outNumbers;
    for (let i = 0; i < length; i++) out[i] = mask[i] === 1 ? x[i] : y[i];
    return { kind: "num", data: out };
  }
  const p = flags(a, length, s.leftFlags);
  const q = p && flags(b, length, s.rightFlags);
  if (p && q) {
    const out = s.outFlags;
    for (let i = 0; i < length; i++) out[i] = mask[i] === 1 ? p[i] : q[i];
    return { kind: "bool", data: out };
  }
  const u = boxed(a, length, s.leftValues);
  const v = boxed(b, length, s.rightValues);
  const out = s.outValues;
  for (let i = 0; i < length; i++) out[i] = mask[i] === 1 ? u[i] : v[i];
  return { kind: "any", data: out };
}

function compileLogical(op: "and" | "or", left: ChunkEvaluator, right: ChunkEvaluator): ChunkEvaluator {
  const mask = new Uint8Array(CHUNK_ROWS);
  const scratch = new SelectScratch();
  // `l and r` is r where l is truthy, else l; `l or r` is l where l is truthy, else r.
  return (chunk) => {
    const l = left(chunk);
    if (l.kind === "const") return truthy(l.value) === (op === "and") ? right(chunk) : l;
    truthMask(l, chunk.length, mask);
    const r = right(chunk);
    return op === "and" ? select(mask, r, l, chunk.length, scratch) : select(mask, l, r, chunk.length, scratch);
  };
}

function compileUnary(op: "-" | "+" | "not", operand: ChunkEvaluator, fallback: ChunkEvaluator): ChunkEvaluator {
  const numbersOut = new Float64Array(CHUNK_ROWS);
  const flagsOut = new Uint8Array(CHUNK_ROWS);
  return (chunk) => {
    const v = operand(chunk);
    if (v.kind === "const") return folded(fallback, chunk);
    const length = chunk.length;
    if (op === "not") {
      truthMask(v, length, flagsOut);
      for (let i = 0; i < length; i++) flagsOut[i] ^= 1;
      return { kind: "bool", data: flagsOut };
    }
    if (v.kind !== "num") return fallback(chunk);
    if (op === "+") return v;
    const data = v.data;
    for (let i = 0; i < length; i++) numbersOut[i] = -data[i];
    return { kind: "num", data: numbersOut };
  };
}

type Arithmetic = "+" | "-" | "*" | "/" | "//" | "%" | "**";
type Comparison = "<" | "<=" | ">" | ">=";
const ARITHMETIC: ReadonlySet<string> = new Set(["+", "-", "*", "/", "//", "%", "**"]);
const COMPARISON: ReadonlySet<string> = new Set(["<", "<=", ">", ">="]);

function compileBinary(op: Exclude<BinaryOperator, "and" | "or">, left: ChunkEvaluator, right: ChunkEvaluator, fallback: ChunkEvaluator): ChunkEvaluator {
  const leftNumbers = new Float64Array(CHUNK_ROWS);
  const rightNumbers = new Float64Array(CHUNK_ROWS);
  const numbersOut = new Float64Array(CHUNK_ROWS);
  const flagsOut = new Uint8Array(CHUNK_ROWS);
  const leftValues: FormulaValue[] = new Array<FormulaValue>(CHUNK_ROWS).fill(null);
  const rightValues: FormulaValue[] = new Array<FormulaValue>(CHUNK_ROWS).fill(null);
  return (chunk) => {
    const l = left(chunk);
    const r = right(chunk);
    if (l.kind === "const" && r.kind === "const") return folded(fallback, chunk);
    const length = chunk.length;
    if (op === "==" || op === "!=") {
      equality(l, r, length, flagsOut, leftValues, rightValues);
      if (op === "!=") for (let i = 0; i < length; i++) flagsOut[i] ^= 1;
      return { kind: "bool", data: flagsOut };
    }
    // A string on either side has its own rules (concatenation, lexicographic order):
    // those shapes go to the row interpreter.
    const x = numbers(l, length, leftNumbers);
    if (!x) return fallback(chunk);
    if (r.kind === "const" && typeof r.value === "number") {
      if (ARITHMETIC.has(op)) arithmeticWithConstant(op as Arithmetic, x, r.value, numbersOut, length);
      else compareWithConstant(op as Comparison, x, r.value, flagsOut, length);
    } else {
      const y = numbers(r, length, rightNumbers);
      if (!y) return fallback(chunk);
      if (ARITHMETIC.has(op)) arithmetic(op as Arithmetic, x, y, numbersOut, length);
      else if (COMPARISON.has(op)) compare(op as Comparison, x, y, flagsOut, length);
    }
    return ARITHMETIC.has(op) ? { kind: "num", data: numbersOut } : { kind: "bool", data: flagsOut };
  };
}

/** `==` as strict equality of formula values (null == null is true); the result is never null. */
function equality(l: Vector, r: Vector, length: number, out: Uint8Array, leftValues: FormulaValue[], rightValues: FormulaValue[]): void {
  if (l.kind === "const") [l, r] = [r, l];
  if (l.kind === "num" && r.kind === "num") {
    const a = l.data, b = r.data;
    for (let i = 0; i < length; i++) {
      const x = a[i], y = b[i];
      out[i] = x === y || (x !== x && y !== y) ? 1 : 0;
    }
    return;
  }
  if (r.kind === "const") {
    const k = r.value;
    if (l.kind === "num") {
      const a = l.data;
      if (k === null) for (let i = 0; i < length; i++) out[i] = a[i] !== a[i] ? 1 : 0;
      else if (typeof k === "number") for (let i = 0; i < length; i++) out[i] = a[i] === k ? 1 : 0;
      else out.fill(0, 0, length);
      return;
    }
    if (l.kind === "bool") {
      const a = l.data;
      const code = k === null ? NULL_BOOL : k === true ? 1 : k === false ? 0 : -1;
      for (let i = 0; i < length; i++) out[i] = a[i] === code ? 1 : 0;
      return;
    }
    if (l.kind === "any") {
      const a = l.data;
      for (let i = 0; i < length; i++) out[i] = a[i] === k ? 1 : 0;
      return;
    }
  }
  const a = boxed(l, length, leftValues);
  const b = boxed(r, length, rightValues);
  for (let i = 0; i < length; i++) out[i] = a[i] === b[i] ? 1 : 0;
}

/*
 * One loop per operator, so each stays a tight monomorphic loop. A result that is not
 * finite becomes NaN (null), as finite() does in compile.ts: `r - r === 0` holds only
 * for finite r. NaN (null) operands propagate through every operator but `**`
 * (NaN ** 0 is 1), which checks them.
 */
function arithmetic(op: Arithmetic, a: Float64Array, b: Float64Array, out: Float64Array, n: number): void {
  switch (op) {
    case "+": for (let i = 0; i < n; i++) { const r = a[i] + b[i]; out[i] = r - r === 0 ? r : NaN; } return;
    case "-": for (let i = 0; i < n; i++) { const r = a[i] - b[i]; out[i] = r - r === 0 ? r : NaN; } return;
    case "*": for (let i = 0; i < n; i++) { const r = a[i] * b[i]; out[i] = r - r === 0 ? r : NaN; } return;
    case "/": for (let i = 0; i < n; i++) { const r = a[i] / b[i]; out[i] = r - r === 0 ? r : NaN; } return;
    case "//": for (let i = 0; i < n; i++) { const r = Math.floor(a[i] / b[i]); out[i] = r - r === 0 ? r : NaN; } return;
    // Python's modulo takes the divisor's sign.
    case "%": for (let i = 0; i < n; i++) { const y = b[i]; const r = ((a[i] % y) + y) % y; out[i] = r - r === 0 ? r : NaN; } return;
    case "**": for (let i = 0; i < n; i++) { const x = a[i], y = b[i]; const r = x ** y; out[i] = x === x && y === y && r - r === 0 ? r : NaN; } return;
  }
}

function arithmeticWithConstant(op: Arithmetic, a: Float64Array, k: number, out: Float64Array, n: number): void {
  switch (op) {
    case "+": for (let i = 0; i < n; i++) { const r = a[i] + k; out[i] = r - r === 0 ? r : NaN; } return;
    case "-": for (let i = 0; i < n; i++) { const r = a[i] - k; out[i] = r - r === 0 ? r : NaN; } return;
    case "*": for (let i = 0; i < n; i++) { const r = a[i] * k; out[i] = r - r === 0 ? r : NaN; } return;
    case "/": for (let i = 0; i < n; i++) { const r = a[i] / k; out[i] = r - r === 0 ? r : NaN; } return;
    case "//": for (let i = 0; i < n; i++) { const r = Math.floor(a[i] / k); out[i] = r - r === 0 ? r : NaN; } return;
    case "%": for (let i = 0; i < n; i++) { const r = ((a[i] % k) + k) % k; out[i] = r - r === 0 ? r : NaN; } return;
    case "**": for (let i = 0; i < n; i++) { const x = a[i]; const r = x ** k; out[i] = x === x && r - r === 0 ? r : NaN; } return;
  }
}

// NaN (null) on either side gives null, as comparable() does in compile.ts.
function compare(op: Comparison, a: Float64Array, b: Float64Array, out: Uint8Array, n: number): void {
  switch (op) {
    case "<": for (let i = 0; i < n; i++) { const x = a[i], y = b[i]; out[i] = x !== x || y !== y ? NULL_BOOL : x < y ? 1 : 0; } return;
    case "<=": for (let i = 0; i < n; i++) { const x = a[i], y = b[i]; out[i] = x !== x || y !== y ? NULL_BOOL : x <= y ? 1 : 0; } return;
    case ">": for (let i = 0; i < n; i++) { const x = a[i], y = b[i]; out[i] = x !== x || y !== y ? NULL_BOOL : x > y ? 1 : 0; } return;
    case ">=": for (let i = 0; i < n; i++) { const x = a[i], y = b[i]; out[i] = x !== x || y !== y ? NULL_BOOL : x >= y ? 1 : 0; } return;
  }
}

function compareWithConstant(op: Comparison, a: Float64Array, k: number, out: Uint8Array, n: number): void {
  switch (op) {
    case "<": for (let i = 0; i < n; i++) { const x = a[i]; out[i] = x !== x ? NULL_BOOL : x < k ? 1 : 0; } return;
    case "<=": for (let i = 0; i < n; i++) { const x = a[i]; out[i] = x !== x ? NULL_BOOL : x <= k ? 1 : 0; } return;
    case ">": for (let i = 0; i < n; i++) { const x = a[i]; out[i] = x !== x ? NULL_BOOL : x > k ? 1 : 0; } return;
    case ">=": for (let i = 0; i < n; i++) { const x = a[i]; out[i] = x !== x ? NULL_BOOL : x >= k ? 1 : 0; } return;
  }
}

function compileCall(name: string, args: ChunkEvaluator[], fallback: ChunkEvaluator): ChunkEvaluator {
  const out = new Float64Array(CHUNK_ROWS);
  const broadcast = args.map(() => new Float64Array(CHUNK_ROWS));
  return (chunk) => {
    const vectors = args.map((arg) => arg(chunk));
    if (vectors.every((v) => v.kind === "const")) return folded(fallback, chunk);
    const length = chunk.length;
    const x = numbers(vectors[0], length, broadcast[0]);
    if (!x) return fallback(chunk);
    switch (name) {
      case "abs":
        for (let i = 0; i < length; i++) out[i] = Math.abs(x[i]);
        return { kind: "num", data: out };
      case "float":
        return { kind: "num", data: x };
      case "int":
        for (let i = 0; i < length; i++) out[i] = Math.trunc(x[i]);
        return { kind: "num", data: out };
      case "round": {
        const digits = vectors.length === 1 ? 0 : vectors[1].kind === "const" ? vectors[1].value : null;
        if (typeof digits !== "number" || !Number.isInteger(digits) || Math.abs(digits) > 15) return fallback(chunk);
        const factor = 10 ** digits;
        // Half away from zero, as roundTo() in compile.ts.
        for (let i = 0; i < length; i++) {
          const v = x[i];
          const r = (Math.sign(v) * Math.round(Math.abs(v) * factor)) / factor;
          out[i] = r - r === 0 ? r : NaN;
        }
        return { kind: "num", data: out };
      }
      case "min":
      case "max": {
        const columns = [x];
        for (let j = 1; j < vectors.length; j++) {
          const column = numbers(vectors[j], length, broadcast[j]);
          if (!column) return fallback(chunk);
          columns.push(column);
        }
        extremes(columns, name === "max", out, length);
        return { kind: "num", data: out };
      }
      default:
        return fallback(chunk);
    }
  };
}

/** min/max as extreme() in compile.ts: any null gives null, and the first of equal values wins. */
function extremes(columns: Float64Array[], wantGreater: boolean, out: Float64Array, length: number): void {
  out.set(columns[0].subarray(0, length));
  for (let j = 1; j < columns.length; j++) {
    const column = columns[j];
    if (wantGreater) for (let i = 0; i < length; i++) { const v = column[i], best = out[i]; out[i] = v !== v ? NaN : v > best ? v : best; }
    else for (let i = 0; i < length; i++) { const v = column[i], best = out[i]; out[i] = v !== v ? NaN : v < best ? v : best; }
  }
}
