import { describe, expect, it } from "vitest";
import { formatManifestError, formatPath } from "@/lib/manifest/errors";
import { parseDashboardYaml, parseWidgetYaml } from "./parse";

const dashboard = (spec: string) => `version: "1.0"
kind: dashboard
metadata:
  id: sales
  name: Sales
spec:
${spec}`;

const BASE = dashboard(`  datasets:
    - id: sales
      from: orders
      dimensions:
        - { id: order_date, column: orders.order_date }
        - { id: channel, column: orders.channel }
      metrics:
        - { id: revenue, type: sql, expression: sum(orders.amount) }
        - { id: cost, type: sql, expression: sum(orders.cost) }
        - { id: margin, type: formula, expression: "(revenue - cost) / revenue" }
  tabs:
    - { id: main, name: Main, widgets: [date, revenue] }
---
version: "1.0"
kind: widget
metadata: { id: date, name: Date }
spec:
  component: filter
  layout: { x: 0, y: 0, w: 3, h: 1 }
  display: { filter: { control: date, default: last month } }
  bindings: [{ target: "*", field: order_date, operator: date }]
---
version: "1.0"
kind: widget
metadata: { id: revenue, name: Revenue }
spec:
  component: kpi
  layout: { x: 3, y: 0, w: 3, h: 2 }
  data: { kind: dataset, dataset: sales, columns: [revenue, margin], mappings: { value: revenue } }
  display: { kpi: { format: currency, prefix: "$" } }
  filters: [{ filter_id: date, field: order_date, operator: date }]
`);

function errorsOf(yaml: string) {
  const result = parseDashboardYaml(yaml);
  if (result.ok) throw new Error("expected errors");
  return result.errors;
}

describe("parseDashboardYaml", () => {
  it("accepts a dashboard with widget documents and applies defaults", () => {
    const result = parseDashboardYaml(BASE);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.dashboard.widgets.map((w) => w.metadata.id)).toEqual(["date", "revenue"]);
    expect(result.dashboard.widgetsById.get("revenue")?.spec.display.kpi?.format).toBe("currency");
    expect(result.dashboard.manifest.platform.allow_embed).toBe(false);
    expect(result.dashboard.datasets.get("sales")?.metrics).toHaveLength(3);
  });

  it("accepts widgets listed under spec.widgets", () => {
    const yaml = dashboard(`  widgets:
    - version: "1.0"
      kind: widget
      metadata: { id: note, name: Note }
      spec: { component: markdown, layout: { x: 0, y: 0, w: 4, h: 2 }, display: { markdown: { content: "# Hi" } } }
  tabs: [{ id: t, name: T, widgets: [note] }]`);
    const result = parseDashboardYaml(yaml);
    expect(result.ok && result.dashboard.widgetsById.has("note")).toBe(true);
  });

  it("reports YAML syntax errors with their line", () => {
    const errors = errorsOf(`version: "1.0"\nkind: dashboard\nmetadata:\n  id: [unclosed\n`);
    expect(errors[0].line).toBeGreaterThanOrEqual(4);
  });

  it("reports every schema error at once, each at its own line and column", () => {
    const yaml = BASE.replace("w: 3, h: 2", "w: wide, h: 2").replace("component: filter", "component: slider").replace("name: Sales", "nmae: Sales");
    const errors = errorsOf(yaml);
    const text = errors.map((e) => formatManifestError(e, "d.yaml"));
    expect(text).toEqual(
      expect.arrayContaining([
        "d.yaml:5:3 metadata.nmae: unknown field 'nmae'",
        "d.yaml:4:3 metadata.name: is required",
        expect.stringMatching(/^d\.yaml:24:14 spec\.component: Invalid option/),
        "d.yaml:34:28 spec.layout.w: Invalid input: expected number, received string",
      ]),
    );
  });

  it("does not report an invalid widget as missing where it is referenced", () => {
    const errors = errorsOf(BASE.replace("w: 3, h: 1 }", "w: 3, h: one }"));
    expect(errors.map((e) => `${e.line}: ${e.message}`)).toEqual(["25: Invalid input: expected number, received string"]);
  });

  it("takes data.formats beside SQL and refuses it on a dataset, whose columns declare theirs in the dataset", () => {
    const sql = BASE.replace("data: { kind: dataset, dataset: sales, columns: [revenue, margin], mappings: { value: revenue } }", "data: { kind: sql, query: \"SELECT sum(amount) AS revenue FROM orders\", formats: { revenue: currency } }");
    const parsed = parseDashboardYaml(sql);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    expect(parsed.dashboard.widgetsById.get("revenue")?.spec.data?.formats).toEqual({ revenue: "currency" });
    const onDataset = BASE.replace("mappings: { value: revenue } }", "mappings: { value: revenue }, formats: { revenue: currency } }");
    expect(errorsOf(onDataset).map((e) => `${e.line}: ${e.message}`)).toEqual(["35: data.formats is for kinds sql, static and demo; a dataset's columns declare their format where they are defined"]);
  });

  it("checks cross references: tabs, datasets, filters, mappings, duplicates", () => {
    const yaml = BASE.replace("widgets: [date, revenue]", "widgets: [date, revenue, ghost]")
      .replace("dataset: sales, columns", "dataset: salez, columns")
      .replace("mappings: { value: revenue }", "mappings: { value: profit }")
      .replace("metadata: { id: date, name: Date }", "metadata: { id: revenue, name: Date }");
    const messages = errorsOf(yaml).map((e) => `${e.line}: ${e.message}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        "18: no widget has id 'ghost'",
        "31: duplicate widget id 'revenue'",
        "35: no dataset has id 'salez'; declared: sales",
        "35: mapping 'value' names 'profit', which is not among the widget's columns",
      ]),
    );
  });

  it("rejects metric cycles and unknown ids with the position inside the expression", () => {
    const yaml = BASE.replace('expression: "(revenue - cost) / revenue"', 'expression: "share * 2"').replace(
      "- { id: cost, type: sql, expression: sum(orders.cost) }",
      "- { id: cost, type: sql, expression: sum(orders.cost) }\n        - { id: share, type: formula, expression: margin + nope }",
    );
    const errors = errorsOf(yaml);
    expect(errors.map((e) => e.message)).toEqual(expect.arrayContaining(["unknown field 'nope'", expect.stringMatching(/cycle: (margin -> share -> margin|share -> margin -> share)/)]));
    const unknown = errors.find((e) => e.message === "unknown field 'nope'")!;
    expect([unknown.line, unknown.column]).toEqual([16, 60]);
  });

  it("requires fully qualified columns for SQL datasets and rejects statement breakers", () => {
    const yaml = BASE.replace("column: orders.channel", "column: channel").replace("expression: sum(orders.amount)", 'expression: "sum(orders.amount); DELETE FROM orders"');
    const messages = errorsOf(yaml).map((e) => e.message);
    expect(messages).toEqual(expect.arrayContaining(["column 'channel' must be fully qualified, e.g. <table>.channel", "';' is not allowed in an expression"]));
  });

  it("keeps SQL out of field names: ids, binding fields, columns lists and order_by are identifiers only", () => {
    const hostile = `order_date" OR 1=1 --`;
    const yaml = BASE.replace("{ id: channel, column: orders.channel }", `{ id: 'channel"; DROP TABLE orders; --', column: orders.channel }`)
      .replace('field: order_date, operator: date }]\n---', `field: '${hostile}', operator: date }]\n---`)
      .replace("columns: [revenue, margin]", "columns: [revenue, 'margin) FROM users --']")
      .replace("      metrics:", "      order_by: [{ column: 'revenue DESC; DELETE FROM orders' }]\n      metrics:");
    const errors = errorsOf(yaml);
    expect(errors.map((e) => `${e.line}:${formatPath(e.path)}`)).toEqual([
      "12:spec.datasets[0].dimensions[1].id",
      "13:spec.datasets[0].order_by[0].column",
      "28:spec.bindings[0].field",
      "36:spec.data.columns[1]",
    ]);
    const from = errorsOf(BASE.replace("from: orders", "from: 'orders; DELETE FROM orders'"));
    expect(from.map((e) => `${e.line}:${formatPath(e.path)}: ${e.message}`)).toEqual(["9:spec.datasets[0].from: ';' is not allowed in an expression"]);
  });

  it("explains a dashboard that is not first, a numeric version and duplicate keys", () => {
    expect(errorsOf(BASE.split("---\n").slice(1).join("---\n"))[0].message).toMatch(/first document must be the dashboard/);
    expect(errorsOf(BASE.replace('version: "1.0"', "version: 1.0"))[0].message).toMatch(/quote it/);
    expect(errorsOf(BASE.replace("kind: dashboard", "kind: dashboard\nkind: dashboard"))[0].message).toMatch(/unique/i);
  });

  it("never throws on hostile input", () => {
    const inputs = ["", "---", "[]", "null", "a: &a [*a]", "x".repeat(1_100_000), "version: !!js/function 'x'", "{".repeat(5000), `a: &a ["x","x"]\nb: &b [*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]`];
    for (const input of inputs) expect(parseDashboardYaml(input).ok).toBe(false);
  });
});

describe("parseWidgetYaml", () => {
  it("validates a widget file on its own", () => {
    const result = parseWidgetYaml(BASE.split("---\n")[2]);
    expect(result.ok).toBe(true);
  });
});
