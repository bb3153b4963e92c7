// `npm run bench -- date-expressions`: the cost of a long date filter value, now (refused by
// length before any parsing) beside the baseline it replaced (the same text through chrono, as
// lib/query/dates.ts did for anything up to 200 characters), in one fresh process. chrono's
// first heavy use compiles its large patterns to native code, so the first call is reported apart.
import * as chrono from "chrono-node";
import { DateExpressionError, resolveDateExpression } from "@/lib/query/dates";

const INPUTS = {
  "march 3 x25": "march 3 ".repeat(25).slice(0, 200),
  "- noon x29": "- noon ".repeat(29).slice(0, 200),
  "3 week x29": "3 week ".repeat(29).slice(0, 200),
};
const RUNS = 50;

function time(run: () => void): { first: number; median: number } {
  const samples: number[] = [];
  for (let i = 0; i <= RUNS; i++) {
    const started = performance.now();
    run();
    samples.push(performance.now() - started);
  }
  const [first, ...rest] = samples;
  rest.sort((a, b) => a - b);
  return { first, median: rest[Math.floor(rest.length / 2)] };
}

export default async function main() {
  const now = new Date();
  const context = { now, timeZone: "Europe/Berlin" };
  const ms = (n: number) => `${n.toFixed(2)} ms`;
  // Now first, so the baseline's warm-up cannot help it (it never reaches chrono anyway).
  const current = Object.entries(INPUTS).map(([name, text]) => ({
    name,
    ...time(() => {
      try {
        resolveDateExpression(text, context);
      } catch (error) {
        if (!(error instanceof DateExpressionError)) throw error;
      }
    }),
  }));
  console.log("input (200 chars)        baseline first / median      now first / median      ratio (first)");
  for (const { name, first, median } of current) {
    const baseline = time(() => chrono.parse(INPUTS[name as keyof typeof INPUTS], { instant: now, timezone: 60 }, { forwardDate: false }));
    console.log(
      `${name.padEnd(24)} ${ms(baseline.first).padStart(10)} / ${ms(baseline.median).padStart(9)}   ${ms(first).padStart(9)} / ${ms(median).padStart(9)}   ${(first / baseline.first).toFixed(4)}`,
    );
  }
}
