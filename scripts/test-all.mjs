// `npm test`: every check, in order of cost. Type check and lint, unit and
// integration tests (vitest, real embedded PostgreSQL; then again on a PostgreSQL
// server when QUARRY_TEST_DATABASE_URL is set), a production build, then browser
// tests (Playwright in Debian's Chromium against that build; the dashboards and
// documents specs once more on the PostgreSQL server).
// Ends with one summary line: "N passed, N failed".
import { spawn } from "node:child_process";
import fs from "node:fs";
import { retriedTestLines } from "./flaky-tests.mjs";

process.env.NEXT_TELEMETRY_DISABLED = "1";
const node = process.execPath;
const steps = [
  ["typecheck", [node, "node_modules/typescript/bin/tsc", "--noEmit"]],
  ["lint", [node, "node_modules/eslint/bin/eslint.js", "--max-warnings=0", "."]],
  ["vitest", [node, "node_modules/vitest/vitest.mjs", "run", "--reporter=default", "--reporter=json", "--outputFile=test-results/vitest-report.json"]],
  // The same files again on a PostgreSQL server, each on its own copy of a migrated, seeded template
  // database (test/global-setup.ts): what PGlite hides (privileges, concurrency, real connections).
  ["vitest-postgres", [node, "node_modules/vitest/vitest.mjs", "run", "--reporter=default", "--reporter=json", "--outputFile=test-results/vitest-postgres-report.json"], { QUARRY_TEST_ENGINE: "postgres" }],
  ["build", [node, "node_modules/next/dist/bin/next", "build"]],
  ["playwright", [node, "node_modules/@playwright/test/cli.js", "test"]],
  // The production build once more on the PostgreSQL server, on a fresh database.
  ["playwright-postgres", [node, "node_modules/@playwright/test/cli.js", "test", "e2e/dashboards.spec.ts", "e2e/documents.spec.ts"]],
];
const postgresUrl = process.env.QUARRY_TEST_DATABASE_URL;
const E2E_DATABASE = "quarry_e2e";

fs.mkdirSync("test-results", { recursive: true });
fs.rmSync(".data/e2e", { recursive: true, force: true });
fs.rmSync(".data/e2e-postgres", { recursive: true, force: true });
const failedSteps = [];
/** [step, lines] of each failed step, repeated at the end: a CI log is often read from its tail. */
const failureReasons = [];
const vitestReports = [];
const e2eReports = [];
for (const [name, [cmd, ...args], env = {}] of steps) {
  if (name.startsWith("playwright") && failedSteps.includes("build")) {
    failedSteps.push(name);
    continue;
  }
  if (name.endsWith("-postgres") && !postgresUrl) {
    console.log(`\n=== ${name}: skipped: no PostgreSQL (set QUARRY_TEST_DATABASE_URL; .ci/run starts ../shared/tools/pg-test-server)`);
    continue;
  }
  if (name === "playwright-postgres") {
    env.E2E_DATABASE_URL = await freshDatabase(postgresUrl, E2E_DATABASE);
    // Beside the first run's port: its server may still be releasing it.
    env.E2E_PORT = String(Number(process.env.E2E_PORT ?? 3100) + 50);
  }
  console.log(`\n=== ${name}: ${args.slice(1).join(" ")}`);
  const started = Date.now();
  const { status, output } = await runTeed(cmd, args, { ...process.env, ...env });
  console.log(`=== ${name}: ${status === 0 ? "ok" : `FAILED (exit ${status})`} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  if (status !== 0) {
    failedSteps.push(name);
    failureReasons.push([name, whyFailed(output)]);
  }
  // Read now: Playwright empties test-results/ (its output folder) when it starts.
  if (name.startsWith("vitest")) vitestReports.push([name, readJson(`test-results/${name}-report.json`)]);
  if (name === "playwright") e2eReports.push([name, readJson("test-results/e2e-report.json")]);
  if (name === "playwright-postgres") e2eReports.push([name, readJson("test-results/e2e-postgres-report.json")]);
}

let passed = 0;
let failed = 0;
for (const [, vitest] of vitestReports) {
  if (!vitest) continue;
  passed += vitest.numPassedTests ?? 0;
  failed += vitest.numFailedTests ?? 0;
}
for (const [, e2e] of e2eReports) {
  if (!e2e?.stats) continue;
  // A flaky test failed once and passed on its retry (CI retries once): it passed, and is named below.
  passed += (e2e.stats.expected ?? 0) + (e2e.stats.flaky ?? 0);
  failed += e2e.stats.unexpected ?? 0;
}
// A failed step that ran no counted test (type check, lint, build) still counts as a failure.
failed += failedSteps.filter((s) => !s.startsWith("vitest") && s !== "playwright").length;
for (const [name, lines] of failureReasons) {
  console.log(`\n--- why ${name} failed (the lines above that say so) ---`);
  console.log(lines.length ? lines.join("\n") : "(no failing test or error line found: read the step's output above)");
}
if (failedSteps.length) console.log(`\nFailed steps: ${failedSteps.join(", ")}`);
// Every test that needed a retry, by name (file › title): a pass that hides a flake is still to be fixed.
const retried = retriedTestLines([...vitestReports, ...e2eReports]);
if (retried.length) console.log(`\n${retried.join("\n")}`);
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failedSteps.length ? 1 : 0);

/** Drops and recreates `name` from the database of `serverUrl` (which has the vector extension); returns its URL. */
async function freshDatabase(serverUrl, name) {
  const { default: pg } = await import("pg");
  const base = new URL(serverUrl);
  const maintenance = new URL(serverUrl);
  maintenance.pathname = "/postgres";
  const client = new pg.Client({ connectionString: maintenance.toString() });
  await client.connect();
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${name} TEMPLATE "${decodeURIComponent(base.pathname.slice(1))}"`);
  } finally {
    await client.end();
  }
  base.pathname = `/${name}`;
  return base.toString();
}

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return null;
  }
}

/** Runs a step with its output shown as it comes, and keeps the last part of it for the summary. */
function runTeed(cmd, args, env) {
  const KEEP = 2 * 1024 * 1024;
  let output = "";
  const keep = (chunk) => {
    output += chunk.toString("utf8");
    if (output.length > KEEP * 2) output = output.slice(-KEEP);
  };
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ["inherit", "pipe", "pipe"], env });
    child.stdout.on("data", (chunk) => {
      process.stdout.write(chunk);
      keep(chunk);
    });
    child.stderr.on("data", (chunk) => {
      process.stderr.write(chunk);
      keep(chunk);
    });
    child.on("close", (code, signal) => resolve({ status: code ?? (signal ? 128 : 1), output }));
  });
}

/** The lines of a step's output that name what failed: failed tests, unhandled errors, type and lint errors. */
function whyFailed(output) {
  const lines = output.replace(/\u001b\[[0-9;]*m/g, "").split("\n");
  const reasons = [];
  const FAILURE = /^\s*(FAIL|×|✘)\s|error TS\d+|^\s*\d+:\d+\s+error\s|Failed to compile|timed out|^\s*Errors\s+\d+ errors?/;
  for (let i = 0; i < lines.length && reasons.length < 80; i++) {
    // An unhandled error with its message and first frames; any other failure line alone.
    const take = /Unhandled (Error|Rejection)/.test(lines[i]) ? 10 : FAILURE.test(lines[i]) ? 1 : 0;
    reasons.push(...lines.slice(i, i + take).map((l) => l.slice(0, 300)));
    i += Math.max(take - 1, 0);
  }
  return reasons;
}
