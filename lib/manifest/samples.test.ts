import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { formatManifestError, manifestValidationItems } from "./errors";
import { parseDashboardYaml } from "./parse";

const dir = path.join(import.meta.dirname, "..", "..", "docs", "manifests");
const samples = fs.readdirSync(dir).filter((f) => f.endsWith(".yaml"));

describe("sample manifests in docs/manifests", () => {
  it("has the bundled sample", () => {
    expect(samples).toContain("sample-dashboard.yaml");
  });

  it.each(samples)("%s validates", (file) => {
    const result = parseDashboardYaml(fs.readFileSync(path.join(dir, file), "utf8"));
    expect(result.ok ? [] : result.errors.map((e) => formatManifestError(e, file))).toEqual([]);
  });

  it("a mistake on line 37 is reported as 37:", () => {
    const lines = fs.readFileSync(path.join(dir, "sample-dashboard.yaml"), "utf8").split("\n");
    // Line 37 is a key: value line inside the dataset's dimensions; break its value.
    expect(lines[36]).toMatch(/^\s+column: /);
    lines[36] = lines[36].replace(/column: .*/, "column: [not, a, string]");
    const result = parseDashboardYaml(lines.join("\n"));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(formatManifestError(result.errors[0], "sample-dashboard.yaml")).toMatch(/^sample-dashboard\.yaml:37:\d+ spec\.datasets\[0\]\.dimensions\[0\]\.column: /);
    expect(manifestValidationItems(result.errors)[0].msg).toMatch(/^37:/);
  });
});
