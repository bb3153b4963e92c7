import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import { MAX_YAML_DEPTH, yamlDepthProblem } from "./yaml-guard";

const deepFlow = `version: "1.0"\nkind: dashboard\nmetadata: { id: d, name: D }\nspec:\n  x: ${"[".repeat(1000)}${"]".repeat(1000)}\n`;
const deepBlock = Array.from({ length: 1000 }, (_, i) => `${" ".repeat(i)}k${i}:`).join("\n");
const deepSequence = `${"- ".repeat(1000)}x\n`;
const deepMixed = Array.from({ length: 1000 }, (_, i) => `${" ".repeat(i)}- {`).join("\n");
// Spellings a line-based scan skipped, each past the stack of the yaml package's composer (issue 41).
const flow = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
const afterDocumentStart = `--- ${flow(30_000)}\n`;
const afterQuoteInPlainScalar = `version: "1.0"\nspec: [a ', ${flow(30_000)}]\n`;
const unclosedFlowPerLine = `x: ${"[\n".repeat(30_000)}`;

describe("YAML depth guard", () => {
  it.each([
    ["flow collections", deepFlow],
    ["block mappings", deepBlock],
    ["a line of sequence markers", deepSequence],
    ["block sequences of open flow maps", deepMixed],
    ["flow sequences after a document start `---`", afterDocumentStart],
    ["flow sequences after a quote inside a plain scalar", afterQuoteInPlainScalar],
    ["flow sequences left open one per line", unclosedFlowPerLine],
  ])("refuses thousands of levels of %s with a position, before the parser runs", (_, text) => {
    const problem = yamlDepthProblem(text);
    expect(problem).toMatchObject({ message: `the manifest nests deeper than ${MAX_YAML_DEPTH} levels` });
    const result = parseDashboardYaml(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors).toEqual([expect.objectContaining({ message: expect.stringContaining("nests deeper"), line: problem?.line, column: problem?.column })]);
  });

  it("passes every bundled manifest, whose block scalars, quotes and comments hold brackets", () => {
    for (const file of ["docs/manifests/sample-dashboard.yaml", "lib/dashboards/fixtures/small-dashboard.yaml"]) {
      expect(yamlDepthProblem(fs.readFileSync(path.join(import.meta.dirname, "..", "..", file), "utf8"))).toBeNull();
    }
    expect(yamlDepthProblem(`a: |\n  ${"[".repeat(200)}\nb: "${"{".repeat(200)}"\nc: 1 # ${"[".repeat(200)}\n`)).toBeNull();
  });

  it("allows nesting up to the limit", () => {
    expect(yamlDepthProblem(`x: ${"[".repeat(MAX_YAML_DEPTH - 1)}${"]".repeat(MAX_YAML_DEPTH - 1)}`)).toBeNull();
  });
});
