import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { formatManifestError } from "@/lib/manifest/errors";
import { clickFilterValue, dateExpressionFor, expressionType, filterTargets, type DrillTargetManifest } from "./interactions";
import { parseDashboardYaml } from "./parse";

const MANIFEST = `version: "1.0"
kind: dashboard
metadata: { id: sales, name: Sales }
spec:
  datasets:
    - id: sales
      from: orders JOIN locations ON locations.id = orders.location_id
      dimensions:
        - { id: order_date, column: orders.order_date }
        - { id: month, column: "to_char(date_trunc('month', orders.order_date), 'YYYY-MM')" }
        - { id: location_id, column: orders.location_id }
        - { id: location, column: locations.name }
      metrics:
        - { id: revenue, type: sql, expression: sum(orders.amount) }
  tabs:
    - { id: main, name: Main, widgets: [date, place, by_month] }
    - { id: detail, name: Detail, widgets: [] }
---
version: "1.0"
kind: widget
metadata: { id: date, name: Date }
spec:
  component: filter
  layout: { x: 0, y: 0, w: 3, h: 1 }
  display: { filter: { control: date, label: Order date } }
  bindings: [{ target: "*", field: order_date, operator: date }]
---
version: "1.0"
kind: widget
metadata: { id: place, name: Place }
spec:
  component: filter
  layout: { x: 3, y: 0, w: 3, h: 1 }
  display: { filter: { control: select, label: Location, multiple: true, options: [loc_a, loc_b] } }
  bindings: [{ target: "*", field: location_id, operator: in }]
---
version: "1.0"
kind: widget
metadata: { id: by_month, name: By month }
spec:
  component: echarts
  layout: { x: 0, y: 1, w: 6, h: 4 }
  data: { kind: dataset, dataset: sales, columns: [month, location_id, revenue], mappings: { x: month, y: revenue } }
  display: { echarts: { option: { series: [{ type: bar }] } } }
  on_click:
    CLICK
`;

const withClick = (click: string) => MANIFEST.replace("CLICK", click.trim().split("\n").join("\n    "));

function errors(text: string, drillTargets?: ReadonlyMap<string, DrillTargetManifest | null>): string[] {
  const result = parseDashboardYaml(text, { drillTargets });
  return result.ok ? [] : result.errors.map((e) => formatManifestError(e));
}

describe("on_click in manifests", () => {
  it("accepts a cross-filter from matching columns and a drill-through within the dashboard", () => {
    expect(errors(withClick("set_filters: [{ filter: date, field: month }, { filter: place, field: location_id }]"))).toEqual([]);
    expect(errors(withClick("drill_through: { tab: detail, filters: [{ filter: place, field: location_id }] }"))).toEqual([]);
    expect(errors(withClick('drill_through: { url: "/documents?location={location_id}" }'))).toEqual([]);
  });

  it("reports a clicked column whose type the filter cannot take at its line and column (Metabase #14473)", () => {
    const found = errors(withClick("set_filters: [{ filter: place, field: month }]"));
    expect(found).toEqual([expect.stringMatching(/^manifest:46:43 .*on_click\.set_filters\[0\]\.field: 'month' cannot set filter 'place': it is a month \(date bucket\) and filter 'Location' takes text/)]);
    expect(errors(withClick("set_filters: [{ filter: date, field: revenue }]"))).toEqual([expect.stringContaining("it is a number and filter 'Order date' takes date expressions")]);
  });

  it("reports unknown fields, filters, tabs, placeholders and a non-chart widget", () => {
    expect(errors(withClick("set_filters: [{ filter: date, field: location }]"))).toEqual([expect.stringContaining("'location' is not among the widget's columns (month, location_id, revenue)")]);
    expect(errors(withClick("set_filters: [{ filter: by_month, field: month }]"))).toEqual([expect.stringContaining("this dashboard has no filter widget 'by_month'")]);
    expect(errors(withClick("drill_through: { tab: nowhere }"))).toEqual([expect.stringContaining("the target dashboard has no tab 'nowhere'; its tabs: main, detail")]);
    expect(errors(withClick('drill_through: { url: "/x?l={nope}" }'))).toEqual([expect.stringContaining("'nope' is not among the widget's columns")]);
    expect(errors(withClick('drill_through: { url: "//evil.example/x" }'))).toEqual([expect.stringContaining("must be a path on this site")]);
    // Spellings that resolve or decode to //evil.example (issue 41).
    for (const url of ["/.//evil.example", "/%2F%2Fevil.example", "/.\\\\/evil.example"]) {
      expect(errors(withClick(`drill_through: { url: "${url}" }`))).toEqual([expect.stringContaining("must stay on this site")]);
    }
    expect(errors(withClick('drill_through: { url: "/\\\\evil.example" }'))).toEqual([expect.stringContaining("must be a path on this site")]);
    expect(errors(withClick("set_filters: [{ filter: date, field: month }]\ndrill_through: { tab: detail }"))).toEqual([expect.stringContaining("on_click does one thing")]);
    const onFilter = MANIFEST.replace("CLICK", "{}").replace("bindings: [{ target: \"*\", field: location_id, operator: in }]", "bindings: [{ target: \"*\", field: location_id, operator: in }]\n  on_click: { set_filters: [{ filter: date, field: x }] }");
    expect(errors(onFilter.replace("  on_click:\n    {}\n", ""))).toEqual([expect.stringContaining("on_click applies to charts (component echarts), not filter")]);
  });

  it("checks another dashboard when the server knows the organization's dashboards", () => {
    const drill = withClick("drill_through: { dashboard: other, tab: main, filters: [{ filter: when, field: month }] }");
    expect(errors(drill)).toEqual([]); // the browser's editor cannot know
    expect(errors(drill, new Map([["other", null]]))).toEqual([expect.stringContaining("no dashboard has slug 'other' in this organization")]);
    const other = parseDashboardYaml(MANIFEST.replace(/\n {2}on_click:\n {4}CLICK\n/, "\n").replace("id: date,", "id: when,").replace("widgets: [date,", "widgets: [when,"));
    if (!other.ok) throw new Error(JSON.stringify(other.errors));
    const target: DrillTargetManifest = { widgets: other.dashboard.widgets, datasets: other.dashboard.datasets, tabs: ["main"] };
    expect(errors(drill, new Map([["other", target]]))).toEqual([]);
    expect(errors(drill.replace("field: month", "field: location_id"), new Map([["other", target]]))).toEqual([]);
    expect(errors(drill.replace("filter: when", "filter: date"), new Map([["other", target]]))).toEqual([expect.stringContaining("dashboard 'other' has no filter widget 'date'")]);
  });

  it("the JSON Schema knows on_click", async () => {
    const { widgetJsonSchema } = await import("@/lib/manifest/json-schema");
    expect(JSON.stringify(widgetJsonSchema())).toContain("set_filters");
  });

  it("the sample dashboard uses both cross-filtering and drill-through", () => {
    const text = fs.readFileSync(path.join(import.meta.dirname, "..", "..", "docs", "manifests", "sample-dashboard.yaml"), "utf8");
    const result = parseDashboardYaml(text);
    if (!result.ok) throw new Error(result.errors.map((e) => formatManifestError(e)).join("\n"));
    const clicks = result.dashboard.widgets.map((w) => w.spec.on_click).filter((c) => c !== undefined);
    expect(clicks.some((c) => c.set_filters)).toBe(true);
    expect(clicks.some((c) => c.drill_through)).toBe(true);
  });
});

describe("clicked values as filter values", () => {
  const parsed = parseDashboardYaml(withClick("set_filters: [{ filter: date, field: month }]"));
  if (!parsed.ok) throw new Error("fixture");
  const targets = filterTargets(parsed.dashboard.widgets, parsed.dashboard.datasets);

  it("reads types from the dimension's expression", () => {
    expect(expressionType("to_char(date_trunc('month', orders.order_date), 'YYYY-MM')")).toEqual({ kind: "date", bucket: "month" });
    expect(expressionType("orders.order_date")).toEqual({ kind: "date", bucket: "day" });
    expect(expressionType("to_char(orders.order_date, 'Dy')")).toEqual({ kind: "text" });
    expect(expressionType("orders.location_id")).toBeNull();
  });

  it("a month bucket becomes that month's date range, a day that day", () => {
    expect(clickFilterValue("2026-02", { kind: "date", bucket: "month" }, targets.date)).toEqual({ ok: true, value: "2026-02-01 to 2026-02-28", text: "2026-02-01 to 2026-02-28" });
    expect(clickFilterValue("2024-02-01T00:00:00.000Z", { kind: "date", bucket: "month" }, targets.date)).toMatchObject({ value: "2024-02-01 to 2024-02-29" });
    expect(clickFilterValue("2026-03-14", { kind: "date", bucket: "day" }, targets.date)).toMatchObject({ value: "2026-03-14" });
    expect(dateExpressionFor("2026-Q2", undefined)).toBe("2026-04-01 to 2026-06-30");
    expect(dateExpressionFor(2025, undefined)).toBe("2025-01-01 to 2025-12-31");
    expect(dateExpressionFor("2026-03-02", "week")).toBe("2026-03-02 to 2026-03-08");
    expect(clickFilterValue("Boston", null, targets.date)).toEqual({ ok: false, reason: '"Boston" is not a date' });
  });

  it("a multiple select gets a list; a mismatched type is refused at run time too", () => {
    expect(targets.place).toMatchObject({ multiple: true, kinds: ["text"], date: false });
    expect(clickFilterValue("loc_a", null, targets.place)).toEqual({ ok: true, value: ["loc_a"], text: "loc_a" });
    expect(clickFilterValue("2026-03", { kind: "date", bucket: "month" }, targets.place)).toMatchObject({ ok: false });
    expect(clickFilterValue(null, null, targets.place)).toMatchObject({ ok: false });
  });
});
