import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { starterManifest } from "@/components/dashboards/starter-manifest";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import type { WidgetManifest } from "@/lib/manifest/schema";
import { resolveFormat } from "@/lib/manifest/value-format";
import { widgetColumnFormats } from "./column-formats";
import { formatKpiValue, formatValue, spreadsheetFormat } from "./format";
import { kpiFigure, tableCells } from "./widget-figures";
import { orgView, renderOnlyView, viewColumnFormats, type ViewManifest } from "./wiring";

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

  it("read money in the organization's currency where the format names none: tiles, tables, exports and embeds of a EUR organization show €", () => {
    const eur = orgView(sample, "EUR");
    const of = (view: ViewManifest, id: string) => view.widgets.find((w) => w.metadata.id === id)!;
    const tile = kpiFigure(of(eur, "revenue_kpi"), ["value"], [{ value: 311_191.67 }], viewColumnFormats(eur, of(eur, "revenue_kpi")));
    expect(tile.text).toBe("€311,191.67");
    const table = tableCells(["location", "revenue"], [{ location: "Downtown", revenue: 1234.5 }], viewColumnFormats(eur, of(eur, "location_table")));
    expect(table.cell("revenue", 1234.5)).toBe("€1,234.50");
    expect(spreadsheetFormat(viewColumnFormats(eur, of(eur, "order_grid")).amount)).toContain('"€"');
    // Embeds and public links get the formats already in the organization's currency.
    const embedded = renderOnlyView(eur);
    expect(embedded.currency).toBe("EUR");
    expect(formatValue(1234.5, resolveFormat(viewColumnFormats(embedded, of(embedded, "location_table")).revenue))).toBe("€1,234.50");
    // Percent and number formats are untouched; the same view for a USD organization still reads $.
    expect(viewColumnFormats(eur, of(eur, "location_table")).margin_pct).toBe("percent");
    const usd = orgView(sample, "USD");
    expect(kpiFigure(of(usd, "revenue_kpi"), ["value"], [{ value: 5 }], viewColumnFormats(usd, of(usd, "revenue_kpi"))).text).toBe("$5.00");
  });

  it("keep a declared code and a KPI tile's own prefix over the organization's currency", () => {
    const tile = { ...widget("revenue_kpi"), spec: { ...widget("revenue_kpi").spec, data: { kind: "dataset" as const, dataset: "rev" } } };
    const kpiDataset = { id: "rev", dimensions: [], metrics: [{ id: "value", type: "sql" as const, expression: "sum(amount)", format: { type: "currency" as const, currency: "GBP" } }] };
    expect(widgetColumnFormats([kpiDataset], tile, "EUR")).toEqual({ value: { type: "currency", currency: "GBP" } });
    // A tile's own display: its currency is the organization's, unless a prefix stands for the symbol.
    const tileWith = (kpi: NonNullable<WidgetManifest["spec"]["display"]["kpi"]>): WidgetManifest => ({ ...tile, spec: { ...tile.spec, display: { ...tile.spec.display, kpi } } });
    const view = orgView({ manifest: sample.manifest, widgets: [tileWith({ format: "currency" }), tileWith({ format: "currency", prefix: "$" })] }, "EUR");
    expect(formatKpiValue(42, view.widgets[0].spec.display.kpi)).toBe("€42.00");
    expect(formatKpiValue(42, view.widgets[1].spec.display.kpi)).toBe("$42.00");
  });
});
