// npm run bench -- formula: formula metrics against the same formula written as a JS function.
//
// Three measures on the same 1M rows, each beside its native baseline in the same run:
// - "values": the formula's value for every row, summed into a checksum, by the column
//   evaluator (typed arrays a chunk at a time, lib/query/formula/vector.ts) against the
//   native function called per row; this is the interpreter's speed, the figure with the aim.
// - "fill": what a query does with a formula metric, writing its column into every row
//   (applyFormulaSteps) against `row.margin = native(row)`. Both pay the same 1M property
//   stores and the garbage collection of the boxed numbers they write, which dominate and
//   vary from run to run on a shared machine.
// - "row": one compiled closure per row (the row interpreter, compile.ts), as before the
//   column evaluator, against the native function.
import { compileFormulaSource } from "@/lib/query/formula/compile";
import { applyFormulaSteps, planFormulaMetrics } from "@/lib/query/formula/plan";
import { CHUNK_ROWS, type ChunkEvaluator, compileFormulaSourceVector } from "@/lib/query/formula/vector";

const ROWS = 1_000_000;
const FORMULA = "round((revenue - cost) / revenue * 100, 1) if revenue > 0 and channel != 'partner' else 0";
type Row = Record<string, unknown>;

function native(row: Row): number | null {
  const revenue = row.revenue as number;
  const cost = row.cost as number;
  if (revenue > 0 && row.channel !== "partner") {
    const x = ((revenue - cost) / revenue) * 100;
    return Math.sign(x) * Math.round(Math.abs(x) * 10) / 10;
  }
  return 0;
}

function timeRows(evaluate: (row: Row) => unknown, rows: Row[]): { ms: number; checksum: number } {
  const start = performance.now();
  let checksum = 0;
  for (const row of rows) checksum += (evaluate(row) as number | null) ?? 0;
  return { ms: performance.now() - start, checksum };
}

function timeColumn(fill: (rows: Row[]) => void, rows: Row[]): { ms: number; checksum: number } {
  const start = performance.now();
  fill(rows);
  const ms = performance.now() - start;
  let checksum = 0;
  for (const row of rows) checksum += (row.margin as number | null) ?? 0;
  return { ms, checksum };
}

function timeChunks(evaluate: ChunkEvaluator, rows: Row[]): { ms: number; checksum: number } {
  const start = performance.now();
  let checksum = 0;
  for (let offset = 0; offset < rows.length; offset += CHUNK_ROWS) {
    const length = Math.min(CHUNK_ROWS, rows.length - offset);
    const vector = evaluate({ rows, start: offset, length, generation: ++generation });
    if (vector.kind !== "num") throw new Error(`expected a numeric column, got ${vector.kind}`);
    const data = vector.data;
    for (let i = 0; i < length; i++) {
      const x = data[i];
      if (x === x) checksum += x;
    }
  }
  return { ms: performance.now() - start, checksum };
}
// Chunk generations for this bench's own calls, far from applyFormulaSteps' counter.
let generation = 1e12;

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const rate = (ms: number) => Math.round(ROWS / (ms / 1000)).toLocaleString("en-US");

function compareRuns(label: string, runs: number, measure: () => [{ ms: number; checksum: number }, { ms: number; checksum: number }]): number {
  const nativeMs: number[] = [];
  const formulaMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const [a, b] = measure();
    if (Math.abs(a.checksum - b.checksum) > 1e-6 * Math.abs(a.checksum)) throw new Error(`${label}: results differ: ${a.checksum} vs ${b.checksum}`);
    nativeMs.push(a.ms);
    formulaMs.push(b.ms);
  }
  const n = median(nativeMs);
  const f = median(formulaMs);
  // The ratio is the median of each run's pair, measured back to back, which holds up
  // better than a ratio of medians when other work on the machine comes and goes.
  const ratio = median(nativeMs.map((ms, i) => ms / formulaMs[i]));
  console.log(`${label}: native JS ${n.toFixed(1)} ms (${rate(n)} rows/s), formula ${f.toFixed(1)} ms (${rate(f)} rows/s): ${ratio.toFixed(2)}x native`);
  return ratio;
}

export default async function bench(): Promise<void> {
  const channels = ["store", "online", "partner"];
  const rows: Row[] = Array.from({ length: ROWS }, (_, i) => ({
    revenue: (i % 997) * 3.5,
    cost: (i % 991) * 2.1,
    channel: channels[i % 3],
    margin: null,
  }));
  const fields = new Set(["revenue", "cost", "channel"]);
  const compiled = compileFormulaSource(FORMULA, fields);
  const vector = compileFormulaSourceVector(FORMULA, fields);
  const { steps, errors } = planFormulaMetrics([{ id: "margin", expression: FORMULA }], fields);
  if (errors.length > 0) throw new Error(JSON.stringify(errors));
  const fillNative = (all: Row[]) => {
    for (const row of all) row.margin = native(row);
  };
  const fillFormula = (all: Row[]) => applyFormulaSteps(all, steps);
  // Warm every path so the JIT has seen them before timing (the fills on a copy of the rows).
  const sample = rows.slice(0, 100_000);
  const sampleCopy = sample.map((row) => ({ ...row }));
  for (let i = 0; i < 3; i++) {
    timeRows(native, sample);
    timeRows(compiled, sample);
    timeChunks(vector, sample);
    timeColumn(fillNative, sampleCopy);
    timeColumn(fillFormula, sampleCopy);
  }
  const runs = 9;
  console.log(`formula: ${FORMULA}`);
  console.log(`rows: ${ROWS.toLocaleString("en-US")}, median of ${runs} runs, native and formula alternating`);
  // The two measures that only read come first, before the fills leave garbage to collect.
  const values = compareRuns("values (column evaluator, typed arrays)", runs, () => [timeRows(native, rows), timeChunks(vector, rows)]);
  compareRuns("row (one compiled closure per row)     ", runs, () => [timeRows(native, rows), timeRows(compiled, rows)]);
  compareRuns("fill (applyFormulaSteps into the rows) ", runs, () => [timeColumn(fillNative, rows), timeColumn(fillFormula, rows)]);
  console.log(`speed ratio (column evaluator/native): ${values.toFixed(2)}x native (aim >= 0.5x)`);
}
