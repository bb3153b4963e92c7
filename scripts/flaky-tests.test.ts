import { describe, expect, it } from "vitest";
import { flakyPlaywrightTests, retriedTestLines, retriedVitestTests } from "./flaky-tests.mjs";

// A Playwright JSON report cut down to what is read: files, describe blocks, specs, tests per project, results per try.
const playwright = {
  stats: { expected: 3, unexpected: 1, flaky: 2, skipped: 1 },
  suites: [
    {
      title: "dashboards.spec.ts",
      file: "dashboards.spec.ts",
      specs: [
        { title: "opens the list", tests: [{ projectName: "chromium", status: "expected", results: [{ status: "passed", retry: 0 }] }] },
        { title: "filters by region", tests: [{ projectName: "chromium", status: "flaky", results: [{ status: "failed", retry: 0 }, { status: "passed", retry: 1 }] }] },
      ],
      suites: [
        {
          title: "embeds",
          file: "dashboards.spec.ts",
          specs: [
            // A timeout then a pass, without the report's own verdict.
            { title: "revoked token is refused", tests: [{ projectName: "chromium", results: [{ status: "timedOut", retry: 0 }, { status: "passed", retry: 1 }] }] },
            { title: "fails every time", tests: [{ projectName: "chromium", status: "unexpected", results: [{ status: "failed", retry: 0 }, { status: "failed", retry: 1 }] }] },
            { title: "skipped", tests: [{ projectName: "chromium", status: "skipped", results: [{ status: "skipped", retry: 0 }] }] },
          ],
        },
      ],
    },
    {
      title: "documents.spec.ts",
      file: "documents.spec.ts",
      specs: [{ title: "uploads", tests: [{ projectName: "chromium", status: "expected", results: [{ status: "passed", retry: 0 }] }] }],
    },
  ],
};

// A vitest JSON report cut down likewise: a retried test keeps its failed tries' messages.
const vitest = {
  numPassedTests: 3,
  numFailedTests: 1,
  testResults: [
    {
      name: "/repo/test/topology/worker.test.ts",
      status: "passed",
      assertionResults: [
        { ancestorTitles: ["a separate worker process"], title: "delivers once", status: "passed", failureMessages: [] },
        { ancestorTitles: ["a separate worker process"], title: "survives a kill", status: "passed", failureMessages: ["AssertionError: expected 'retrying' to be 'sending'"] },
      ],
    },
    {
      name: "/repo/lib/query/run.test.ts",
      status: "failed",
      assertionResults: [
        { ancestorTitles: [], title: "top level", status: "passed", failureMessages: [] },
        { ancestorTitles: ["runs"], title: "fails", status: "failed", failureMessages: ["Error: no"] },
      ],
    },
  ],
};

describe("tests that passed only on a retry", () => {
  it("names Playwright's flaky tests as file › describe › title, not those that passed at once or failed every time", () => {
    expect(flakyPlaywrightTests(playwright)).toEqual(["dashboards.spec.ts › filters by region", "dashboards.spec.ts › embeds › revoked token is refused"]);
  });

  it("names vitest tests that passed with failed tries behind them", () => {
    expect(retriedVitestTests(vitest, "/repo")).toEqual(["test/topology/worker.test.ts › a separate worker process › survives a kill"]);
  });

  it("prints one line per test under a heading, and nothing when there is none or a report is missing", () => {
    expect(retriedTestLines([["vitest", vitest], ["vitest-postgres", null], ["playwright", playwright], ["playwright-postgres", undefined]], "/repo")).toEqual([
      "Passed only on a retry (3):",
      "  [vitest] test/topology/worker.test.ts › a separate worker process › survives a kill",
      "  [playwright] dashboards.spec.ts › filters by region",
      "  [playwright] dashboards.spec.ts › embeds › revoked token is refused",
    ]);
    expect(retriedTestLines([["playwright", { suites: [], stats: { flaky: 0 } }], ["vitest", { testResults: [] }]])).toEqual([]);
  });
});
