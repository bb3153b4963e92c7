import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { starterManifest } from "@/components/dashboards/starter-manifest";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import { resolveFormat } from "@/lib/manifest/value-format";
import { widgetColumnFormats } from "./column-formats";
import { formatKpiValue, formatValue } from "./format";
import { renderOnlyView, viewColumnFormats, type ViewManifest } from "./wiring";

const sample = (() => {
  const parsed = parseDashboardYaml(fs.readFileSync(path.join(import.meta.dirname, "../../docs/manifests/sample-dashboard.yaml"), "utf8"));
  if (!parsed.ok) throw new Error("the sample manifest does not validate");
  return { manifest: parsed.dashboard.manifest, widgets: parsed.dashboard.widgets } satisfies ViewManifest;
})();
const widget = (id: string) => sample.widgets.find((w) => w.metadata.id === id)!;

describe("declared column formats", () => {
  it("come from the dataset's metrics and dimensions, and from a catalog KPI's metrics", () => {
    expect(viewColumnFormats(sample, widget("location_table"))).toMatchObject({ revenue: "currency", cost: "currency", orders: "number", margin_pct: "percent" });
    expect(viewColumnFormats(sample, widget("order_grid"))).toEqual({ amount: "currency" });
    expect(viewColumnFormats(sample, widget("revenue_kpi"))).toEqual({ value: "currency" });
    expect(viewColumnFormats(sample, widget("target_kpi"))).toEqual({ value: "currency", target: "currency", gap_pct: "percent" });
    // SQL has no dataset: it declares its columns' formats beside its query (the all-time totals' revenue is money).
    expect(viewColumnFormats(sample, widget("channel_totals"))).toEqual({ orders: "number", revenue: "currency" });
  });

  it("a dataset's own declaration wins over its catalog KPI's", () => {
    const kpiDataset = { id: "rev", kpi: "revenue", dimensions: [], metrics: [{ id: "value", type: "formula" as const, expression: "value", format: { type: "currency" as const, currency: "EUR" } }] };
    const tile = { ...widget("revenue_kpi"), spec: { ...widget("revenue_kpi").spec, data: { kind: "dataset" as const, dataset: "rev" } } };
    expect(widgetColumnFormats([kpiDataset], tile)).toEqual({ value: { type: "currency", currency: "EUR" } });
  });

  it("travel with the render-only view of embeds and public links, which has no datasets", () => {
    const view = renderOnlyView(sample);
    expect(view.manifest.spec.datasets).toEqual([]);
    expect(viewColumnFormats(view, view.widgets.find((w) => w.metadata.id === "location_table")!)).toMatchObject({ revenue: "currency", margin_pct: "percent" });
    expect(viewColumnFormats(view, view.widgets.find((w) => w.metadata.id === "revenue_kpi")!)).toEqual({ value: "currency" });
    // Only formats: no SQL, KPI id or dataset name goes along.
    expect(JSON.stringify(view.formats)).not.toMatch(/sum\(|orders\.|revenue_vs_target|"kpi"/);
  });

  it("make the revenue tiles and the location table read one money format (issue 27: $311,192 beside $311,191.67)", () => {
    const figure = 311_191.67;
    const revenueTile = formatKpiValue(figure, widget("revenue_kpi").spec.display.kpi, viewColumnFormats(sample, widget("revenue_kpi")).value);
    const targetTile = formatKpiValue(figure, widget("target_kpi").spec.display.kpi, viewColumnFormats(sample, widget("target_kpi")).value);
    const tableCell = formatValue(figure, resolveFormat(viewColumnFormats(sample, widget("location_table")).revenue));
    expect(revenueTile).toBe("$311,191.67");
    expect(targetTile).toBe(revenueTile);
    expect(tableCell).toBe(revenueTile);
    // The declared format decides even against a tile's own decimals.
    expect(formatKpiValue(figure, { format: "currency", prefix: "$", decimals: 0 }, "currency")).toBe("$311,191.67");
  });

  it("the starter manifest of a new dashboard validates and declares its revenue's format once", () => {
    const parsed = parseDashboardYaml(starterManifest("New", "new"));
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const view = { manifest: parsed.dashboard.manifest, widgets: parsed.dashboard.widgets };
    const tile = view.widgets.find((w) => w.metadata.id === "revenue")!;
    const declared = viewColumnFormats(view, tile).revenue;
    expect(formatKpiValue(311_191.67, tile.spec.display.kpi, declared)).toBe("$311,192");
  });
});
