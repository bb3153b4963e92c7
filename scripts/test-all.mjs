// `npm test`: every check, in order of cost. Type check and lint, unit and
// integration tests (vitest, real embedded PostgreSQL), a production build,
// then browser tests (Playwright in Debian's Chromium against that build).
// Ends with one summary line: "N passed, N failed".
import { spawnSync } from "node:child_process";
import fs from "node:fs";

process.env.NEXT_TELEMETRY_DISABLED = "1";
const node = process.execPath;
const steps = [
  ["typecheck", [node, "node_modules/typescript/bin/tsc", "--noEmit"]],
  ["lint", [node, "node_modules/eslint/bin/eslint.js", "--max-warnings=0", "."]],
  ["vitest", [node, "node_modules/vitest/vitest.mjs", "run", "--reporter=default", "--reporter=json", "--outputFile=test-results/vitest-report.json"]],
  ["build", [node, "node_modules/next/dist/bin/next", "build"]],
  ["playwright", [node, "node_modules/@playwright/test/cli.js", "test"]],
];

fs.mkdirSync("test-results", { recursive: true });
fs.rmSync(".data/e2e", { recursive: true, force: true });
const failedSteps = [];
let vitest = null;
for (const [name, [cmd, ...args]] of steps) {
  if (name === "playwright" && failedSteps.includes("build")) {
    failedSteps.push(name);
    continue;
  }
  console.log(`\n=== ${name}: ${args.slice(1).join(" ")}`);
  const started = Date.now();
  const result = spawnSync(cmd, args, { stdio: "inherit" });
  console.log(`=== ${name}: ${result.status === 0 ? "ok" : `FAILED (exit ${result.status})`} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  if (result.status !== 0) failedSteps.push(name);
  // Read now: Playwright empties test-results/ (its output folder) when it starts.
  if (name === "vitest") vitest = readJson("test-results/vitest-report.json");
}

let passed = 0;
let failed = 0;
if (vitest) {
  passed += vitest.numPassedTests ?? 0;
  failed += vitest.numFailedTests ?? 0;
}
const e2e = readJson("test-results/e2e-report.json");
if (e2e?.stats) {
  // A flaky test failed once and passed on its retry (CI retries once): it passed, and is named.
  passed += (e2e.stats.expected ?? 0) + (e2e.stats.flaky ?? 0);
  failed += e2e.stats.unexpected ?? 0;
  if (e2e.stats.flaky) console.log(`\n${e2e.stats.flaky} browser test(s) passed only on retry: see the Playwright list above`);
}
// A failed step that ran no counted test (type check, lint, build) still counts as a failure.
failed += failedSteps.filter((s) => s !== "vitest" && s !== "playwright").length;
if (failedSteps.length) console.log(`\nFailed steps: ${failedSteps.join(", ")}`);
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failedSteps.length ? 1 : 0);

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return null;
  }
}
