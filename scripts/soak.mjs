// `npm run soak -- [rounds] [--steps vitest,vitest-postgres,playwright]`: the test suite run
// again and again (default 5 rounds), to find the tests whose outcome depends on timing. It prints,
// per round, each step's counts, its time and the load average it ran under, and at the end every
// test that failed (or passed only on a retry) in any round, with the rounds it did so in. One
// failure in five is a flake to fix: CI runs once, and a flake there blocks a landing.
// Run it on a loaded machine (e.g. beside `npm run build`) to find what a busy CI runner finds.
// Playwright rounds need a production build first (`npm run build`).
// Repeated fault tests run their full count of rounds here (QUARRY_FAULT_ROUNDS=full, test/faults/rounds.ts), where
// `npm test` runs a few: e.g. the data folder's kill -9 and restart 10 times instead of 3.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import { retriedVitestTests, flakyPlaywrightTests } from "./flaky-tests.mjs";

const args = process.argv.slice(2);
const rounds = Number(args.find((a) => /^\d+$/.test(a)) ?? 5);
const stepsArg = args[args.indexOf("--steps") + 1];
const steps = (args.includes("--steps") ? stepsArg : "vitest,vitest-postgres").split(",");
const node = process.execPath;
process.env.QUARRY_FAULT_ROUNDS ??= "full";
const COMMANDS = {
  vitest: [["node_modules/vitest/vitest.mjs", "run", "--reporter=dot", "--reporter=json", "--outputFile=test-results/soak-vitest.json"], {}, "test-results/soak-vitest.json"],
  "vitest-postgres": [["node_modules/vitest/vitest.mjs", "run", "--reporter=dot", "--reporter=json", "--outputFile=test-results/soak-vitest-postgres.json"], { QUARRY_TEST_ENGINE: "postgres" }, "test-results/soak-vitest-postgres.json"],
  // Playwright's JSON report path is set in playwright.config.ts; it empties test-results/ when it starts.
  playwright: [["node_modules/@playwright/test/cli.js", "test"], {}, "test-results/e2e-report.json"],
};
for (const step of steps) if (!COMMANDS[step]) refuse(`unknown step "${step}" (one of ${Object.keys(COMMANDS).join(", ")})`);
if (steps.includes("vitest-postgres") && !process.env.QUARRY_TEST_DATABASE_URL) {
  refuse("vitest-postgres needs QUARRY_TEST_DATABASE_URL (../shared/tools/pg-test-server start prints one)");
}

/** A usage mistake: one line saying what to do, no stack trace. */
function refuse(message) {
  console.error(`npm run soak: ${message}`);
  process.exit(2);
}

/** "step › file › title" → the rounds it failed or needed a retry in. */
const unstable = new Map();
const note = (name, round) => unstable.set(name, [...(unstable.get(name) ?? []), round]);
for (let round = 1; round <= rounds; round++) {
  for (const step of steps) {
    const [stepArgs, env, reportFile] = COMMANDS[step];
    fs.rmSync(reportFile, { force: true });
    // Each Playwright round starts on a fresh data folder, as in CI (scripts/test-all.mjs).
    if (step === "playwright") fs.rmSync(".data/e2e", { recursive: true, force: true });
    const load = os.loadavg()[0].toFixed(1);
    const started = Date.now();
    const { status } = spawnSync(node, stepArgs, { stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, ...env } });
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    const report = readJson(reportFile);
    const counts = step === "playwright" ? playwrightCounts(report) : vitestCounts(report);
    console.log(`round ${round} ${step}: exit ${status}, ${counts.passed} passed, ${counts.failed} failed, ${seconds} s, load ${load} → ${os.loadavg()[0].toFixed(1)}`);
    for (const name of counts.failedNames) note(`${step} › ${name}`, round);
    const retried = step === "playwright" ? flakyPlaywrightTests(report) : retriedVitestTests(report);
    for (const name of retried) note(`${step} › ${name} (passed on a retry)`, round);
    if (!report) note(`${step} › (no report: the run itself failed, exit ${status})`, round);
  }
}
console.log(unstable.size ? `\nUnstable in ${rounds} rounds (${unstable.size}):` : `\nNo test failed in ${rounds} rounds.`);
for (const [name, inRounds] of unstable) console.log(`  ${name}: round ${inRounds.join(", ")}`);
process.exit(unstable.size ? 1 : 0);

function vitestCounts(report) {
  const failedNames = [];
  for (const file of report?.testResults ?? []) {
    if (file.status === "failed" && !(file.assertionResults ?? []).some((t) => t.status === "failed")) {
      failedNames.push(`${relative(file.name)} (the file failed: ${String(file.message ?? "").split("\n")[0]})`);
    }
    for (const test of file.assertionResults ?? []) {
      if (test.status === "failed") failedNames.push([relative(file.name), ...(test.ancestorTitles ?? []), test.title].join(" › "));
    }
  }
  return { passed: report?.numPassedTests ?? 0, failed: report?.numFailedTests ?? 0, failedNames };
}

function playwrightCounts(report) {
  const failedNames = [];
  const walk = (suite, titles) => {
    const here = suite.title ? [...titles, suite.title] : titles;
    for (const spec of suite.specs ?? []) if (!spec.ok) failedNames.push([...here, spec.title].join(" › "));
    for (const child of suite.suites ?? []) walk(child, here);
  };
  for (const suite of report?.suites ?? []) walk(suite, []);
  const stats = report?.stats ?? {};
  return { passed: (stats.expected ?? 0) + (stats.flaky ?? 0), failed: stats.unexpected ?? 0, failedNames };
}

function relative(file) {
  return file.startsWith(process.cwd()) ? file.slice(process.cwd().length + 1) : file;
}

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return null;
  }
}
