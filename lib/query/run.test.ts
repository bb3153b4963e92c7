import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import type { ParsedDashboard } from "@/lib/manifest/schema";
import { SQL_ALLOW_LIST } from "@/lib/dashboards/manifest";
import { sqlWidgetDashboard } from "@/test/sql-widget-dashboard";
import { QueryError } from "./errors";
import { type StatementRunner, runReadOnly } from "./execute";
import { runWidgetQuery } from "./run";

function parse(yaml: string): ParsedDashboard {
  const result = parseDashboardYaml(yaml);
  if (!result.ok) throw new Error(result.errors.map((e) => `${e.line}:${e.column} ${e.message}`).join("\n"));
  return result.dashboard;
}

const sample = parse(fs.readFileSync(path.join(import.meta.dirname, "..", "..", "docs", "manifests", "sample-dashboard.yaml"), "utf8"));
const now = new Date("2026-11-22T12:00:00Z");
const acme = { orgId: "org_acme" };
const run = (widgetId: string, filterValues: Record<string, unknown> = {}, scope: { orgId: string; locationIds?: string[] } = acme, dashboard = sample) =>
  runWidgetQuery({ scope, dashboard, widgetId, filterValues, now, timeZone: "America/New_York" });

describe("runWidgetQuery on the sample dashboard", () => {
  it("runs every data widget of the sample", async () => {
    for (const widget of sample.widgets.filter((w) => w.spec.data)) {
      const result = await run(widget.metadata.id);
      expect(result.rows.length, widget.metadata.id).toBeGreaterThan(0);
      expect(Object.keys(result.rows[0])).toEqual(result.columns);
    }
  });

  it("computes formula metrics after the query and filters by the default date (last month)", async () => {
    const { columns, rows } = await run("location_table");
    expect(columns).toEqual(["location", "region", "revenue", "orders", "margin_pct"]);
    const all = await run("location_table", { date: null });
    const total = (rs: Record<string, unknown>[]) => rs.reduce((s, r) => s + (r.orders as number), 0);
    expect(total(rows)).toBeLessThan(total(all.rows) / 10);
    for (const row of rows) expect(row.margin_pct).toBeCloseTo(((row.revenue as number) - 0) >= 0 ? (row.margin_pct as number) : 0);
    const margin = await run("margin_gauge");
    expect(margin.rows).toHaveLength(1);
    expect(margin.rows[0].margin_pct).toBeGreaterThan(10);
    expect(margin.rows[0].margin_pct).toBeLessThan(90);
  });

  it("says when the dataset's own limit cut the rows, and not when they fit under it", async () => {
    // order_lines has `limit: 1000`; a month of acme's orders is more than that, one day is not.
    const month = await run("order_grid", { date: "2026-10-01 to 2026-10-31" });
    expect(month.rows).toHaveLength(1000);
    expect(month).toMatchObject({ truncated: true, limit: 1000 });
    const day = await run("order_grid", { date: "2026-10-15" });
    expect(day.rows.length).toBeLessThan(1000);
    expect(day.truncated).toBe(false);
    expect(day.limit).toBeUndefined();
    // Under a smaller row cap the cap cut first: no dataset limit to name.
    const capped = await runWidgetQuery({ scope: acme, dashboard: sample, widgetId: "order_grid", filterValues: { date: "2026-10-01 to 2026-10-31" }, now, timeZone: "America/New_York", rowCap: 10 });
    expect(capped).toMatchObject({ truncated: true });
    expect(capped.rows).toHaveLength(10);
    expect(capped.limit).toBeUndefined();
  });

  it("applies the location select to every widget with location_id, and a sql widget without it ignores it", async () => {
    const nyc = await run("revenue_by_location", { location_filter: ["loc_acme_nyc"] });
    expect(nyc.rows.map((r) => r.location)).toEqual(["Manhattan Flagship"]);
    const totals = await run("channel_totals", { location_filter: ["loc_acme_nyc"] });
    const unfiltered = await run("channel_totals");
    expect(totals.rows).toEqual(unfiltered.rows);
  });

  it("pushes no `*` binding onto a sql widget whose statement lacks its column: one statement, the same rows", async () => {
    const texts: string[] = [];
    const runner: StatementRunner = (text, values) => {
      texts.push(text);
      return runReadOnly(acme, text, values, { timeZone: "America/New_York" });
    };
    const filterValues = { location_filter: ["loc_acme_nyc"], date: "this year" };
    const totals = await runWidgetQuery({ scope: acme, dashboard: sample, widgetId: "channel_totals", filterValues, now, timeZone: "America/New_York", runner });
    // Before, each binding was tried, refused by PostgreSQL (no such column) and dropped: three statements.
    expect(texts).toHaveLength(1);
    expect(texts[0]).not.toMatch(/location_id|order_date/);
    expect(totals.rows).toEqual((await run("channel_totals")).rows);
  });

  it("keeps tenants apart: globex sees its own locations and totals", async () => {
    const acmeLocations = (await run("location_filter")).rows.map((r) => r.location_id);
    const globexLocations = (await run("location_filter", {}, { orgId: "org_globex" })).rows.map((r) => r.location_id);
    expect(acmeLocations.every((id) => String(id).startsWith("loc_acme_"))).toBe(true);
    expect(globexLocations.every((id) => String(id).startsWith("loc_globex_"))).toBe(true);
    expect(globexLocations.length).toBe(4);
    const scoped = await run("location_filter", {}, { orgId: "org_acme", locationIds: ["loc_acme_nyc", "loc_acme_bos"] });
    expect(scoped.rows).toHaveLength(2);
  });

  it("rejects an unusable filter value and an unknown widget with a QueryError", async () => {
    await expect(run("revenue_trend", { date: "sometime soon" })).rejects.toThrow(QueryError);
    await expect(run("revenue_trend", { date: "sometime soon" })).rejects.toThrow(/cannot read "sometime soon" as a date/);
    await expect(run("nope")).rejects.toMatchObject({ code: "unknown_widget" });
  });
});

const custom = (query: string, widgetSpec = "") => sqlWidgetDashboard(query, { filter: true, widgetSpec });

describe("user SQL runs read-only", () => {
  it("runs a read query and filters its rows in SQL", async () => {
    const dashboard = custom("SELECT channel, count(*)::int AS n FROM orders GROUP BY channel ORDER BY channel");
    const all = await run("w", {}, acme, dashboard);
    expect(all.rows.map((r) => r.channel)).toEqual(["online", "partner", "store"]);
    expect((await run("w", { pick: "store" }, acme, dashboard)).rows).toEqual([all.rows[2]]);
  });

  it("a targeted binding on a field the widget lacks empties it", async () => {
    const dashboard = custom("SELECT count(*)::int AS n FROM orders");
    expect((await run("w", { pick: "store" }, acme, dashboard)).rows).toEqual([]);
    expect((await run("w", {}, acme, dashboard)).rows).toHaveLength(1);
  });

  it("a query cancelled by the database's statement timeout is a clear timeout error", async () => {
    // PostgreSQL cancels it itself; the embedded engine's supervisor stops the engine at the same limit (57014 either way).
    const dashboard = custom("SELECT count(*) AS n FROM generate_series(1, 400000000)");
    await expect(runWidgetQuery({ scope: acme, dashboard, widgetId: "w", filterValues: {}, now, timeZone: "UTC", statementTimeoutMs: 300 })).rejects.toMatchObject({
      name: "QueryError",
      code: "timeout",
      message: "The query ran longer than its time limit of 300 ms and was cancelled",
    });
  });

  it("caps the rows a query returns and says so", async () => {
    const dashboard = custom("SELECT id FROM orders");
    const capped = await runWidgetQuery({ scope: acme, dashboard, widgetId: "w", filterValues: {}, now, timeZone: "UTC", rowCap: 7 });
    expect(capped.rows).toHaveLength(7);
    expect(capped.truncated).toBe(true);
    const full = await run("w", {}, acme, dashboard);
    expect(full.rows).toHaveLength(5_000);
    expect(full.truncated).toBe(true);
    const fits = await runWidgetQuery({ scope: acme, dashboard: custom("SELECT id FROM orders ORDER BY id LIMIT 7"), widgetId: "w", filterValues: {}, now, timeZone: "UTC", rowCap: 7 });
    expect(fits.rows).toHaveLength(7);
    expect(fits.truncated).toBe(false);
  });

  it("a filter finds matching rows beyond the first 5,000 of the query (filters run in SQL, before the cap)", async () => {
    // Ordered so the partner rows come after every online and store row (tens of thousands of them).
    const dashboard = custom("SELECT id, channel FROM orders ORDER BY CASE channel WHEN 'partner' THEN 1 ELSE 0 END, id");
    const first = await run("w", {}, acme, dashboard);
    expect(first.truncated).toBe(true);
    expect(first.rows.some((r) => r.channel === "partner")).toBe(false);
    const partner = await run("w", { pick: "partner" }, acme, dashboard);
    expect(partner.rows.length).toBeGreaterThan(0);
    expect(partner.rows.every((r) => r.channel === "partner")).toBe(true);
    const { system } = await getDb();
    const [{ n }] = await system.query<{ n: number }>("SELECT count(*)::int AS n FROM orders WHERE org_id = 'org_acme' AND channel = 'partner'");
    expect(partner.rows).toHaveLength(Math.min(n, 5_000));
    expect(partner.truncated).toBe(n > 5_000);
  });

  it("reads U& identifiers as PostgreSQL does (surrogate pairs included)", async () => {
    const dashboard = custom(`SELECT channel AS U&"ch\\0061n\\D83D\\DE00", count(*)::int AS n FROM orders GROUP BY 1 ORDER BY 1`);
    expect((await run("w", {}, acme, dashboard)).columns).toEqual(["chan\u{1F600}", "n"]);
    expect(() => custom('SELECT 1 AS U&"\\D83D"')).toThrow(/invalid Unicode surrogate pair/);
  });

  it.each(["q", "row", "t", "_quarry_row", "_quarry_source", "row_to_json", "Q"])("a user column named %s does not break the wrapper", async (name) => {
    const quoted = `"${name}"`;
    const dashboard = custom(`SELECT channel AS ${quoted}, count(*)::int AS n FROM orders GROUP BY 1 ORDER BY 1`);
    const result = await run("w", {}, acme, dashboard);
    expect(result.columns).toEqual([name, "n"]);
    expect(result.rows.map((r) => r[name])).toEqual(["online", "partner", "store"]);
  });

  it("a filter on a column named q is pushed down too", async () => {
    const dashboard = custom("SELECT channel, channel AS q, count(*)::int AS n FROM orders GROUP BY 1, 2 ORDER BY 1", "  filters: [{ filter_id: pick, field: q, operator: eq }]");
    expect((await run("w", { pick: "store" }, acme, dashboard)).rows.map((r) => r.q)).toEqual(["store"]);
  });

  it("a widget's own filters entry on a field its data lacks empties it (SPEC 2.5 rule 4)", async () => {
    const dashboard = custom("SELECT channel, count(*)::int AS n FROM orders GROUP BY channel", "  filters: [{ filter_id: pick, field: region, operator: eq }]");
    expect((await run("w", { pick: "store" }, acme, dashboard)).rows).toEqual([]);
    // No value chosen: no condition, so nothing to lack.
    expect((await run("w", {}, acme, dashboard)).rows).toHaveLength(3);
  });

  // Stored before a rule existed, or past the editor: the statement is checked again before it runs.
  it.each([
    ["WITH gone AS (DELETE FROM orders RETURNING id) SELECT count(*) FROM gone", "sql_not_allowed"],
    ["SELECT * FROM users", "sql_not_allowed"],
    ["SELECT ts_rewrite('a'::tsquery, 'SELECT set_config(''role'',''none'',true)')", "sql_not_allowed"],
    [`SELECT U&"query!005fto!005fxml"UESCAPE'!'('SELECT email FROM users', true, true, '')`, "sql_not_allowed"],
    ["SELECT no_such_column FROM orders", "sql_error"],
  ])("%s is refused at run time (%s)", async (query, code) => {
    await expect(run("w", {}, acme, custom(query))).rejects.toMatchObject({ name: "QueryError", code });
  });

  it.each([
    ["DELETE FROM orders", /only read queries are allowed/],
    ["SELECT set_config('app.org_id', 'org_globex', true), (SELECT count(*) FROM orders)", /set_config\(\) is not allowed/],
    ['SELECT pg_catalog."set_config"(\'app.org_id\', \'x\', false)', /set_config\(\) is not allowed/],
    ["SELECT pg_sleep(60)", /pg_sleep\(\) is not allowed/],
    ['SELECT U&"pg\\005fsleep"(60)', /pg_sleep\(\) is not allowed/],
    ['SELECT u&"pg\\+00005fsleep"(60)', /pg_sleep\(\) is not allowed/],
    ["SELECT U&\"pg!005fsleep\" UESCAPE '!'(60)", /pg_sleep\(\) is not allowed/],
    ['SELECT pg_catalog.U&"set\\005Fconfig"(\'app.org_id\', \'x\', false)', /set_config\(\) is not allowed/],
    ['SELECT "pg_sleep"(1)', /pg_sleep\(\) is not allowed/],
    ["SELECT query_to_xml('select * from orders', true, false, '')", /query_to_xml\(\) is not allowed/],
    ["SELECT * FROM ts_stat('select to_tsvector(name) from locations')", /ts_stat\(\) is not allowed/],
    ["SELECT pg_advisory_lock(1)", /pg_advisory_lock\(\) is not allowed/],
    ['SELECT U&"pg\\zzzz"(1)', /invalid Unicode escape/],
    ["SELECT ts_rewrite('a'::tsquery, 'SELECT 1')", /function ts_rewrite\(\) is not allowed/],
    [`SELECT U&"set!005fconfig"UESCAPE'!'('role','none',true)`, /function set_config\(\) is not allowed/],
    ["SELECT email FROM users", /table "users" is not allowed/],
  ])("%s is refused at validation", (query, message) => {
    expect(() => sqlWidgetDashboard(query, { filter: true, sqlPolicy: SQL_ALLOW_LIST })).toThrow(message);
  });

  it("a second statement is refused at validation, and never reaches the database", () => {
    expect(() => custom("SELECT 1; DROP TABLE orders")).toThrow(/only one statement is allowed/);
    expect(() => custom("SELECT 1 /* unterminated")).toThrow(/unterminated/);
  });
});
