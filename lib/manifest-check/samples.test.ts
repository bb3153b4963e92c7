import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { formatManifestError, manifestValidationItems } from "@/lib/manifest/errors";
import { parseDashboardYaml } from "./parse";

const dir = path.join(import.meta.dirname, "..", "..", "docs", "manifests");
const samples = fs.readdirSync(dir).filter((f) => f.endsWith(".yaml"));

describe("sample manifests in docs/manifests", () => {
  it("has the bundled sample", () => {
    expect(samples).toContain("sample-dashboard.yaml");
  });

  it("the bundled sample shows every part issue 4 asks of it", () => {
    const result = parseDashboardYaml(fs.readFileSync(path.join(dir, "sample-dashboard.yaml"), "utf8"));
    if (!result.ok) throw new Error("the sample does not validate");
    const { manifest, widgets } = result.dashboard;
    expect(manifest.spec.tabs.length).toBeGreaterThanOrEqual(2);
    expect(manifest.spec.config?.filterPanel).toBeDefined();
    expect(manifest.spec.config?.header?.widgets.length).toBeGreaterThan(0);
    expect(manifest.spec.config?.footer?.widgets.length).toBeGreaterThan(0);
    const filters = widgets.filter((w) => w.spec.component === "filter");
    expect(filters.some((w) => w.spec.display.filter?.control === "date")).toBe(true);
    expect(filters.some((w) => w.spec.display.filter?.control === "select" && w.spec.bindings.some((b) => b.field === "location_id"))).toBe(true);
    expect(widgets.some((w) => w.spec.component === "kpi" && w.spec.display.kpi?.delta)).toBe(true);
    const seriesTypes = new Set(
      widgets.flatMap((w) => ((w.spec.display.echarts?.option.series ?? []) as { type?: string }[]).map((series) => series.type)),
    );
    for (const type of ["line", "bar", "pie", "heatmap", "gauge", "radar", "scatter"]) expect(seriesTypes, type).toContain(type);
    const components = new Set(widgets.map((w) => w.spec.component));
    for (const component of ["table", "tabulator", "markdown", "image"] as const) expect(components, component).toContain(component);
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
