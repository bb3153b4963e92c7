// npm run bench -- formula: the formula interpreter against the same formula written as a JS function.
import { compileFormulaSource } from "@/lib/query/formula/compile";

const ROWS = 1_000_000;
const FORMULA = "round((revenue - cost) / revenue * 100, 1) if revenue > 0 and channel != 'partner' else 0";

function native(row: Record<string, unknown>): number | null {
  const revenue = row.revenue as number;
  const cost = row.cost as number;
  if (revenue > 0 && row.channel !== "partner") {
    const x = ((revenue - cost) / revenue) * 100;
    return Math.sign(x) * Math.round(Math.abs(x) * 10) / 10;
  }
  return 0;
}

function time(evaluate: (row: Record<string, unknown>) => unknown, rows: Record<string, unknown>[]): { ms: number; checksum: number } {
  const start = performance.now();
  let checksum = 0;
  for (const row of rows) checksum += (evaluate(row) as number | null) ?? 0;
  return { ms: performance.now() - start, checksum };
}

export default async function bench(): Promise<void> {
  const channels = ["store", "online", "partner"];
  const rows = Array.from({ length: ROWS }, (_, i) => ({
    revenue: (i % 997) * 3.5,
    cost: (i % 991) * 2.1,
    channel: channels[i % 3],
  }));
  const compiled = compileFormulaSource(FORMULA, new Set(["revenue", "cost", "channel"]));
  // Warm both paths so the JIT has seen them before timing.
  for (let i = 0; i < 3; i++) {
    time(native, rows.slice(0, 100_000));
    time(compiled, rows.slice(0, 100_000));
  }
  const runs = 5;
  const nativeMs: number[] = [];
  const formulaMs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const a = time(native, rows);
    const b = time(compiled, rows);
    if (Math.abs(a.checksum - b.checksum) > 1e-6 * Math.abs(a.checksum)) throw new Error(`results differ: ${a.checksum} vs ${b.checksum}`);
    nativeMs.push(a.ms);
    formulaMs.push(b.ms);
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  const n = median(nativeMs);
  const f = median(formulaMs);
  console.log(`formula: ${FORMULA}`);
  console.log(`rows: ${ROWS.toLocaleString("en-US")}, median of ${runs} runs`);
  console.log(`native JS function : ${n.toFixed(1)} ms  (${Math.round(ROWS / (n / 1000)).toLocaleString("en-US")} rows/s)`);
  console.log(`formula interpreter: ${f.toFixed(1)} ms  (${Math.round(ROWS / (f / 1000)).toLocaleString("en-US")} rows/s)`);
  console.log(`speed ratio (interpreter/native): ${(n / f).toFixed(2)}x native (aim >= 0.5x)`);
}
