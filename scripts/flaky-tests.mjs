// Which tests passed only on a retry, read from the JSON reports of scripts/test-all.mjs:
// Playwright's (test-results/e2e-report.json, e2e-postgres-report.json) and vitest's.
import path from "node:path";

const FAILED = new Set(["failed", "timedOut", "interrupted"]);

/** A Playwright test that failed and then passed on a retry: "flaky" in its report, or a failed result followed by a passed one. */
function passedOnRetry(test) {
  if (test.status === "flaky") return true;
  const statuses = (test.results ?? []).map((r) => r.status);
  const firstFailure = statuses.findIndex((s) => FAILED.has(s));
  return firstFailure !== -1 && statuses.indexOf("passed", firstFailure + 1) !== -1;
}

/** Full names ("file › describe › title") of the Playwright tests in `report` that needed a retry. */
export function flakyPlaywrightTests(report) {
  const names = [];
  const walk = (suite, titles) => {
    const here = suite.title ? [...titles, suite.title] : titles;
    for (const spec of suite.specs ?? []) {
      if ((spec.tests ?? []).some(passedOnRetry)) names.push([...here, spec.title].join(" › "));
    }
    for (const child of suite.suites ?? []) walk(child, here);
  };
  for (const suite of report?.suites ?? []) walk(suite, []);
  return names;
}

/**
 * Full names ("file › describe › title", the file relative to `root`) of the vitest tests in
 * `report` (its JSON reporter) that passed after failing: a test retried (vitest's `retry`)
 * keeps the errors of its failed tries, so it is "passed" with failure messages.
 */
export function retriedVitestTests(report, root = process.cwd()) {
  const names = [];
  for (const file of report?.testResults ?? []) {
    for (const test of file.assertionResults ?? []) {
      if (test.status === "passed" && (test.failureMessages ?? []).length > 0) {
        names.push([path.relative(root, file.name), ...(test.ancestorTitles ?? []), test.title].join(" › "));
      }
    }
  }
  return names;
}

/** The lines naming every test of `reports` ([step, report] pairs) that passed only on a retry; none when there is none. */
export function retriedTestLines(reports, root = process.cwd()) {
  const lines = [];
  for (const [step, report] of reports) {
    const names = step.startsWith("playwright") ? flakyPlaywrightTests(report) : retriedVitestTests(report, root);
    lines.push(...names.map((name) => `  [${step}] ${name}`));
  }
  return lines.length ? [`Passed only on a retry (${lines.length}):`, ...lines] : [];
}
