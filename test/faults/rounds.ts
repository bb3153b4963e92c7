/**
 * How many rounds a repeated fault test runs (issue 47 §4). `npm test` and CI run a few, enough to catch a
 * regression of the recovery path each round walks; `npm run soak` (scripts/soak.mjs) sets
 * QUARRY_FAULT_ROUNDS=full and runs the whole count, to find the rare timing a few rounds miss.
 * QUARRY_FAULT_ROUNDS=<n> runs exactly n.
 */
export function faultRounds(quick: number, full: number): number {
  const asked = process.env.QUARRY_FAULT_ROUNDS;
  if (!asked) return quick;
  if (asked === "full") return full;
  const rounds = Number(asked);
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`QUARRY_FAULT_ROUNDS must be "full" or a whole number ≥ 1, not "${asked}"`);
  return rounds;
}
