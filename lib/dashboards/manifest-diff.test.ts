import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { diffManifests } from "./manifest-diff";
import { reformatYaml } from "@/test/support/reformat-yaml";

const SMALL = fs.readFileSync(path.join(import.meta.dirname, "fixtures/small-dashboard.yaml"), "utf8");
const SAMPLE = fs.readFileSync(path.join(process.cwd(), "docs/manifests/sample-dashboard.yaml"), "utf8");

describe("meaning-level manifest diff", () => {
  it("sees no change when only the text changes: key order, quoting, comments, whitespace, flow vs block style", () => {
    for (const yaml of [SMALL, SAMPLE]) {
      const reformatted = reformatYaml(yaml);
      expect(reformatted).not.toBe(yaml);
      const diff = diffManifests(yaml, reformatted);
      expect(diff.entries).toEqual([]);
      expect(diff).toMatchObject({ changed: false, unparsed: false });
    }
  });

  it("sees no change for a field written at its default, or a widget moved from its own document into spec.widgets", () => {
    const extra = "    - id: extra\n      from: orders\n      dimensions: [{ id: channel, column: orders.channel }]\n";
    const withDataset = SMALL.replace("  tabs:\n", `${extra}  tabs:\n`);
    // `metrics` defaults to []: writing it out changes nothing.
    expect(diffManifests(withDataset, withDataset.replace(extra, `${extra}      metrics: []\n`)).changed).toBe(false);
    const noteDocument = /---\nversion: "1.0"\nkind: widget\nmetadata: \{ id: note[\s\S]*$/;
    const inline = SMALL.replace(noteDocument, "").replace(
      "spec:\n  datasets:",
      "spec:\n  widgets:\n    - version: \"1.0\"\n      kind: widget\n      metadata: { id: note, name: Note }\n      spec:\n        component: markdown\n        layout: { x: 0, y: 6, w: 12, h: 2 }\n        display:\n          markdown: { content: \"Figures are gross of returns.\" }\n  datasets:",
    );
    const diff = diffManifests(SMALL, inline);
    expect(diff).toMatchObject({ changed: false, unparsed: false });
  });

  it("names widgets added, removed, changed by field path, filters, tabs, datasets and layout moves", () => {
    const edited = SMALL
      // moved: only its layout
      .replace("layout: { x: 3, y: 2, w: 6, h: 4 }", "layout: { x: 6, y: 2, w: 6, h: 5 }")
      // changed: a display field
      .replace('kpi: { format: currency, prefix: "$" }', 'kpi: { format: number, prefix: "$" }')
      // a filter's binding
      .replace("- { target: revenue_kpi, field: order_date, operator: date }", "- { target: \"*\", field: order_date, operator: date }")
      // a dataset metric, addressed by its id
      .replace("expression: sum(orders.amount)", "expression: sum(orders.amount - orders.cost)")
      // removed widget (and its tab entry)
      .replace(/---\nversion: "1.0"\nkind: widget\nmetadata: \{ id: note[\s\S]*$/, "")
      .replace("widgets: [location, period, revenue_kpi, by_channel, note]", "widgets: [location, period, revenue_kpi, by_channel, notes2]")
      // added widget
      .concat('---\nversion: "1.0"\nkind: widget\nmetadata: { id: notes2, name: Notes }\nspec:\n  component: markdown\n  layout: { x: 0, y: 9, w: 12, h: 2 }\n  display:\n    markdown: { content: "hi" }\n');
    const diff = diffManifests(SMALL, edited);
    expect(diff.unparsed).toBe(false);
    const byId = Object.fromEntries(diff.entries.map((e) => [`${e.section}:${e.id}`, e]));
    expect(byId["widgets:by_channel"]).toMatchObject({ change: "moved", fields: [{ path: "spec.layout.h", before: 4, after: 5 }, { path: "spec.layout.x", before: 3, after: 6 }] });
    expect(byId["widgets:revenue_kpi"]).toMatchObject({ change: "changed", fields: [{ path: "spec.display.kpi.format", before: "currency", after: "number" }] });
    expect(byId["filters:period"]).toMatchObject({ change: "changed", fields: [{ path: "spec.bindings[0].target", before: "revenue_kpi", after: "*" }] });
    expect(byId["datasets:sales"]).toMatchObject({ change: "changed", fields: [{ path: "metrics[id=revenue].expression", before: "sum(orders.amount)", after: "sum(orders.amount - orders.cost)" }] });
    expect(byId["widgets:note"]).toMatchObject({ change: "removed" });
    expect(byId["widgets:notes2"]).toMatchObject({ change: "added" });
    expect(byId["tabs:main"]).toMatchObject({ change: "changed", fields: [{ path: "widgets[4]", before: "note", after: "notes2" }] });
    expect(diff.summary).toEqual({ added: 1, removed: 1, changed: 4, moved: 1 });
  });

  it("reports dashboard settings by path and a reordered tab list", () => {
    const twoTabs = SMALL.replace("    - { id: main, name: Main, widgets: [location, period, revenue_kpi, by_channel, note] }", "    - { id: main, name: Main, widgets: [location, period, revenue_kpi, by_channel] }\n    - { id: more, name: More, widgets: [note] }");
    const swapped = twoTabs
      .replace("    - { id: main, name: Main, widgets: [location, period, revenue_kpi, by_channel] }\n    - { id: more, name: More, widgets: [note] }", "    - { id: more, name: More, widgets: [note] }\n    - { id: main, name: Main, widgets: [location, period, revenue_kpi, by_channel] }")
      .replace("public: false", "public: true");
    const diff = diffManifests(twoTabs, swapped);
    expect(diff.entries).toEqual([
      { section: "dashboard", id: "dashboard", change: "changed", fields: [{ path: "platform.public", before: false, after: true }] },
      { section: "tabs", id: "(order)", change: "changed", fields: [{ path: "order", before: ["main", "more"], after: ["more", "main"] }] },
    ]);
  });

  it("still diffs a side that does not validate, as its YAML reads", () => {
    const broken = SMALL.replace("component: table", "component: tabel");
    const diff = diffManifests(SMALL, broken);
    expect(diff.unparsed).toBe(true);
    expect(diff.entries).toEqual([{ section: "widgets", id: "by_channel", change: "changed", fields: [{ path: "spec.component", before: "table", after: "tabel" }] }]);
    // 5 widgets, 1 tab, 1 dataset
    expect(diffManifests("", SMALL).summary.added).toBe(7);
  });
});
