import fs from "node:fs";
import path from "node:path";
import { describe, expect, test } from "vitest";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import { WidgetManifest } from "@/lib/manifest/schema";
import { catalogSqlPolicy, tableCatalog } from "@/lib/manifest-check/table-names";
import { readDashboardValue, readDataset, readWidget, setYamlValue, writeDataset, writeWidget, type PlainMap } from "@/lib/manifest/yaml-widget-edit";
import { BUILDER_KINDS, type WidgetDraft, datasetForTable, datasetWithOrder, draftFromWidget, emptyDraft, freeWidgetId, nextLayout, readsData, tabsWithWidget, widgetFromDraft } from "./widget-draft";

const SAMPLE = fs.readFileSync(path.join(import.meta.dirname, "../../../docs/manifests/sample-dashboard.yaml"), "utf8");

function parsed(text: string) {
  const result = parseDashboardYaml(text);
  if (!result.ok) throw new Error(result.errors.map((e) => `${e.line}:${e.column} ${e.path.join(".")} ${e.message}`).join("\n"));
  return result.dashboard;
}

const dashboard = parsed(SAMPLE);
const sales = dashboard.datasets.get("sales")!;

/** A draft of every kind over the sample's `sales` dataset, as a user would pick it. */
function draftOf(kind: WidgetDraft["kind"]): WidgetDraft {
  const base = { ...emptyDraft(`built_${kind}`, "sales"), kind, name: `Built ${kind}` };
  switch (kind) {
    case "scatter":
      return { ...base, dimensions: ["location"], metrics: ["orders", "revenue"], xLabel: "Orders", yLabel: "Revenue" };
    case "heatmap":
      return { ...base, dimensions: ["weekday", "channel"], metrics: ["orders"] };
    case "radar":
      return { ...base, dimensions: ["category"], metrics: ["revenue", "orders"] };
    case "gauge":
      return { ...base, metrics: ["margin_pct"] };
    case "kpi":
      return { ...base, metrics: ["margin_pct"], kpiFormat: "percent" };
    case "filter":
      return { ...base, dimensions: ["channel"] };
    case "text":
    case "markdown":
      return { ...base, content: "**Hello** — a note" };
    case "image":
      return { ...base, content: "/logo.png", imageAlt: "Logo" };
    case "bar":
    case "line":
    case "area":
      return { ...base, dimensions: ["location"], metrics: ["revenue"], xLabel: "Location", yLabel: "Revenue", sort: { column: "revenue", dir: "desc" }, limit: 10 };
    default:
      return { ...base, dimensions: ["location"], metrics: ["revenue"], sort: { column: "revenue", dir: "desc" }, limit: 10 };
  }
}

function build(text: string, draft: WidgetDraft): string {
  let next = text;
  if (readsData(draft.kind)) next = writeDataset(next, datasetWithOrder(readDataset(next, draft.dataset)!, draft));
  return writeWidget(next, widgetFromDraft(draft, readWidget(next, draft.id), nextLayout(dashboard.widgets)));
}

describe("the builder's output", () => {
  test.each(BUILDER_KINDS)("a %s validates with the manifest schema and the dashboard's checks, and reads back as built", (kind) => {
    const draft = draftOf(kind);
    const text = build(SAMPLE, draft);
    expect(text.startsWith(SAMPLE.slice(0, SAMPLE.indexOf("  datasets:")))).toBe(true);
    const widget = readWidget(text, draft.id)!;
    expect(WidgetManifest.safeParse(widget).success).toBe(true);
    const after = parsed(text);
    expect(after.widgetsById.get(draft.id)?.spec.component).toBe(readsData(kind) && kind.match(/^(bar|line|area|pie|scatter|heatmap|gauge|radar)$/) ? "echarts" : kind);
    const back = draftFromWidget(widget, [...after.datasets.values()]);
    const expected = readsData(kind) ? draft : { ...draft, dataset: "", dimensions: [], metrics: [], sort: null, limit: null };
    expect(back).toEqual(expected);
    // Saving again without a change writes nothing.
    expect(build(text, back)).toBe(text);
  });

  test("every dataset widget of the sample opens and saves again without a byte changed", () => {
    for (const widget of dashboard.widgets) {
      if (widget.spec.data && widget.spec.data.kind !== "dataset") continue;
      const plain = readWidget(SAMPLE, widget.metadata.id)!;
      const draft = draftFromWidget(plain, [...dashboard.datasets.values()]);
      if (!readsData(draft.kind)) continue;
      expect(writeWidget(SAMPLE, widgetFromDraft(draft, plain, {})), widget.metadata.id).toBe(SAMPLE);
    }
  });

  test("changing the chart kind changes only that widget's kind lines; its clicks and tooltip stay", () => {
    const plain = readWidget(SAMPLE, "revenue_by_location")!;
    const draft = draftFromWidget(plain, [sales]);
    const out = writeWidget(SAMPLE, widgetFromDraft({ ...draft, kind: "line", yLabel: "Revenue" }, plain, {}));
    const before = SAMPLE.split("\n");
    const after = out.split("\n");
    expect(after.length).toBe(before.length);
    const changed = before.flatMap((line, i) => (line === after[i] ? [] : [[line, after[i]]]));
    expect(changed).toEqual([
      ["        yAxis: { type: value }", "        yAxis: { type: value, name: Revenue }"],
      ["        series: [{ type: bar }]", "        series: [{ type: line }]"],
    ]);
    expect(parsed(out).widgetsById.get("revenue_by_location")?.spec.on_click).toEqual(dashboard.widgetsById.get("revenue_by_location")?.spec.on_click);
  });

  test("one of the organization's own tables becomes a dataset of its text columns and numeric sums", () => {
    const table = { name: "shipments", own: true, columns: [{ name: "org_id", type: "text" }, { name: "carrier", type: "text" }, { name: "weight kg", type: "numeric" }, { name: "sent_on", type: "date" }] };
    const dataset = datasetForTable(table, "shipments");
    expect(dataset.dimensions.map((d) => d.id)).toEqual(["carrier", "sent_on"]);
    expect(dataset.metrics.map((m) => [m.id, m.expression])).toEqual([
      ["row_count", "count(*)"],
      ["weight_kg_sum", 'sum(shipments."weight kg")'],
    ]);
    const draft = { ...emptyDraft("by_carrier", "shipments"), name: "By carrier", dimensions: ["carrier"], metrics: ["weight_kg_sum"] };
    let text = writeDataset(SAMPLE, datasetWithOrder(dataset as unknown as PlainMap, draft));
    text = writeWidget(text, widgetFromDraft(draft, null, nextLayout(dashboard.widgets)));
    // Checked as the editor checks it, with this organization's tables in the catalog (the sample also reads the
    // demo organization's marketing_spend, which this catalog leaves out).
    const result = parseDashboardYaml(text, { sqlPolicy: catalogSqlPolicy(tableCatalog([table])) });
    expect(result.ok ? [] : result.errors.filter((e) => !e.message.startsWith("unknown table 'marketing_spend'"))).toEqual([]);
    expect(readDataset(text, "shipments")).toMatchObject({ from: "shipments" });
  });

  test("a new widget is listed in the chosen tab, and moves when another is chosen; only that list's line changes", () => {
    const text = build(SAMPLE, draftOf("bar"));
    const inOverview = setYamlValue(text, 0, ["spec", "tabs"], tabsWithWidget(readDashboardValue(text, ["spec", "tabs"]), "overview", "built_bar")!);
    expect(parsed(inOverview).manifest.spec.tabs.map((t) => t.widgets.includes("built_bar"))).toEqual([true, false]);
    const changed = text.split("\n").flatMap((line, i) => (line === inOverview.split("\n")[i] ? [] : [inOverview.split("\n")[i]]));
    expect(changed).toEqual([expect.stringMatching(/^ {6}widgets: \[date, .*, margin_gauge, built_bar\]$/)]);
    const moved = setYamlValue(inOverview, 0, ["spec", "tabs"], tabsWithWidget(readDashboardValue(inOverview, ["spec", "tabs"]), "analysis", "built_bar")!);
    expect(parsed(moved).manifest.spec.tabs.map((t) => t.widgets.includes("built_bar"))).toEqual([false, true]);
    expect(tabsWithWidget(undefined, "x", "y")).toBeUndefined();
  });

  test("ids and layouts", () => {
    expect(freeWidgetId("chart", new Set(["chart", "chart_2"]))).toBe("chart_3");
    expect(freeWidgetId("9 odd name!", new Set())).toBe("9_odd_name_");
    expect(nextLayout(dashboard.widgets).y).toBeGreaterThan(0);
  });
});
