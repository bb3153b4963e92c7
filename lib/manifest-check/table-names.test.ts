import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseDashboardYaml } from "./parse";
import { catalogNameProblem, catalogSqlPolicy, nameCompletions, tableCatalog, type CatalogTable } from "./table-names";

const spend: CatalogTable = {
  name: "marketing_spend",
  own: true,
  columns: [{ name: "day", type: "date" }, { name: "location_code", type: "text" }, { name: "channel", type: "text" }, { name: "spend", type: "numeric" }],
};
const catalog = tableCatalog([spend]);

describe("the editor's name check over the organization's catalog", () => {
  it("accepts names that resolve: own tables, the warehouse, aliases, CTEs and subqueries", () => {
    for (const sql of [
      "SELECT m.channel, sum(m.spend) FROM marketing_spend m GROUP BY m.channel",
      "SELECT marketing_spend.day FROM public.marketing_spend",
      'SELECT s."spend" FROM "marketing_spend" AS s JOIN locations l ON l.code = s.location_code',
      "WITH t AS (SELECT * FROM marketing_spend) SELECT t.whatever FROM t",
      "SELECT x.anything FROM (SELECT 1 AS anything) x",
      "SELECT o.amount, m.spend FROM orders o, marketing_spend m WHERE o.order_date = m.day",
      "SELECT g.x FROM generate_series(1, 3) AS g(x)",
    ]) {
      expect(catalogNameProblem(sql, catalog), sql).toBeNull();
    }
  });

  it("names an unknown table and a missing column at their offsets", () => {
    const table = catalogNameProblem("SELECT 1 FROM marketing_spnd", catalog)!;
    expect(table.message).toMatch(/unknown table 'marketing_spnd'; your organization's tables: marketing_spend; the warehouse has orders/);
    expect(table.position).toBe("SELECT 1 FROM ".length);

    const sql = "SELECT m.spend, m.budget FROM marketing_spend m";
    const column = catalogNameProblem(sql, catalog)!;
    expect(column.message).toBe("table 'marketing_spend' has no column 'budget'; its columns: day, location_code, channel, spend");
    expect(column.position).toBe(sql.indexOf("budget"));

    // A comma-separated FROM list and a JOIN each bring their tables into scope.
    expect(catalogNameProblem("SELECT o.nope FROM marketing_spend m, orders o", catalog)?.message).toMatch(/table 'orders' has no column 'nope'/);
    expect(catalogNameProblem("SELECT 1 FROM orders o JOIN spend_2024 s ON true", catalog)?.message).toMatch(/unknown table 'spend_2024'/);
  });

  it("reports at line:col through parseDashboardYaml, for a source, an expression and an sql widget", () => {
    const yaml = [
      'version: "1.0"',
      "kind: dashboard",
      "metadata: { id: d, name: D }",
      "platform: { scope: org, roles: [admin], allow_embed: false, public: false }",
      "spec:",
      "  datasets:",
      "    - id: spend",
      "      from: marketing_spend",
      "      dimensions: [{ id: day, column: marketing_spend.dday }]",
      "      metrics: [{ id: spend, type: sql, expression: sum(marketing_spend.spend) }]",
      "  tabs: [{ id: main, name: Main, widgets: [t] }]",
      "  widgets:",
      "    - version: \"1.0\"",
      "      kind: widget",
      "      metadata: { id: t, name: T }",
      "      spec:",
      "        component: table",
      "        layout: { x: 0, y: 0, w: 6, h: 3 }",
      "        data: { kind: sql, query: 'SELECT s.chanel FROM marketing_spend s' }",
    ].join("\n");
    const result = parseDashboardYaml(yaml, { sqlPolicy: catalogSqlPolicy(catalog) });
    expect(result.ok).toBe(false);
    const errors = result.ok ? [] : result.errors.map((e) => `${e.line}:${e.column} ${e.message}`);
    expect(errors).toEqual([
      expect.stringMatching(/^9:55 table 'marketing_spend' has no column 'dday'/),
      expect.stringMatching(/^19:45 table 'marketing_spend' has no column 'chanel'/),
    ]);
    // The same manifest with the names right passes.
    const fixed = yaml.replace("dday", "day").replace("s.chanel", "s.channel");
    expect(parseDashboardYaml(fixed, { sqlPolicy: catalogSqlPolicy(catalog) }).ok).toBe(true);
  });

  it("an unknown source table is reported where the source names it", () => {
    const problem = (() => {
      try {
        catalogSqlPolicy(catalog).source("orders JOIN marketing_spends ON true");
        return null;
      } catch (error) {
        return error as { message: string; position: number };
      }
    })();
    expect(problem?.message).toMatch(/unknown table 'marketing_spends'/);
    expect(problem?.position).toBe("orders JOIN ".length);
  });
});

describe("the bundled sample under the editor's check", () => {
  it("passes with the demo organizations' marketing_spend, and names it when the organization lacks the table", () => {
    const sample = fs.readFileSync(path.join(import.meta.dirname, "..", "..", "docs", "manifests", "sample-dashboard.yaml"), "utf8");
    const demo: CatalogTable = {
      name: "marketing_spend",
      own: true,
      columns: ["org_id", "day", "location_code", "channel", "spend", "clicks"].map((name) => ({ name })),
    };
    expect(parseDashboardYaml(sample, { sqlPolicy: catalogSqlPolicy(tableCatalog([demo])) }).ok).toBe(true);
    const without = parseDashboardYaml(sample, { sqlPolicy: catalogSqlPolicy(tableCatalog([])) });
    expect(without.ok ? [] : without.errors.map((e) => e.message)).toEqual([expect.stringMatching(/^unknown table 'marketing_spend'/)]);
  });
});

describe("name completion", () => {
  it("offers the catalog's tables, then a table's or an alias's columns with their types", () => {
    const tables = nameCompletions("      from: mark", catalog)!;
    expect(tables.from).toBe("      from: ".length);
    expect(tables.options.find((o) => o.label === "marketing_spend")).toEqual({ label: "marketing_spend", kind: "table", detail: "your table · 4 columns" });
    expect(tables.options.find((o) => o.label === "orders")?.detail).toBe("warehouse");

    const columns = nameCompletions("SELECT m.sp", catalog, "SELECT m.sp FROM marketing_spend m")!;
    expect(columns.from).toBe("SELECT m.".length);
    expect(columns.options.map((o) => `${o.label}:${o.detail}`)).toContain("spend:marketing_spend · numeric");

    expect(nameCompletions("sum(marketing_spend.", catalog)!.options.map((o) => o.label)).toEqual(["day", "location_code", "channel", "spend"]);
    expect(nameCompletions("SELECT q.", catalog)).toBeNull();
    // Table names only where a table goes, unless asked for (Ctrl-Space).
    expect(nameCompletions("  component: ta", catalog)).toBeNull();
    expect(nameCompletions("  component: ta", catalog, undefined, true)?.options.length).toBeGreaterThan(4);
    expect(nameCompletions("SELECT * FROM orders o JOIN ", catalog)?.options.map((o) => o.label)).toContain("marketing_spend");
  });
});
