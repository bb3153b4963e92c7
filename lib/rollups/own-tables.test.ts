import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { SQL_ALLOW_LIST } from "@/lib/dashboards/manifest";
import { loadTable } from "@/lib/data/load";
import type { RowSource } from "@/lib/data/formats/types";
import { withOwnTables } from "@/lib/db/own-tables";
import type { TenantScope } from "@/lib/db/tenant";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import type { ParsedDashboard } from "@/lib/manifest/schema";
import { dashboardRollups } from "@/lib/query/rollup-definition";
import type { BuiltRollup } from "@/lib/query/rollup-routing";
import { planWidget, sharedScans } from "@/lib/query/run";
import { type WidgetOutcome, filterYaml, publishRollups, runWidgets, seededRandom, widgetYaml } from "@/test/support/sample-variants";
import { refreshOrganizationRollups } from "./build";
import { drainRollupQueue } from "./jobs";
import { freshRollups, rollupId } from "./registry";

/**
 * Rollups over an organization's own tables (issue 42 §4): declared on a dataset over a loaded table like the
 * warehouse's, answered exactly (for the organization and for location-limited managers, by a location column of
 * ids and of codes), stale as soon as a load commits and rebuilt by the refresh the load asks for.
 */

const SPEND = `spend_${randomBytes(4).toString("hex")}`;
const BY_CODE = `spend_codes_${randomBytes(4).toString("hex")}`;
const ZONES: Record<string, string> = { org_acme: "America/New_York", org_globex: "Europe/Berlin" };
const LOCATIONS: Record<string, { id: string; code: string }[]> = { org_acme: [], org_globex: [] };
const CHANNELS = ["search", "social", "email"];
const now = new Date();

const DASHBOARD = `version: "1.0"
kind: dashboard
metadata: { id: own-rollups, name: Own rollups }
spec:
  datasets:
    - id: spend
      from: ${SPEND} JOIN locations ON locations.id = ${SPEND}.location_id
      dimensions:
        - { id: order_date, column: ${SPEND}.day }
        - { id: month, column: "to_char(date_trunc('month', ${SPEND}.day), 'YYYY-MM')" }
        - { id: location_id, column: ${SPEND}.location_id }
        - { id: region, column: locations.region }
        - { id: channel, column: ${SPEND}.channel }
        - { id: clicks_each, column: ${SPEND}.clicks }
      metrics:
        - { id: amount, type: sql, expression: sum(${SPEND}.amount) }
        - { id: clicks, type: sql, expression: sum(${SPEND}.clicks) }
        - { id: rows, type: sql, expression: count(*) }
        - { id: biggest, type: sql, expression: max(${SPEND}.amount) }
        - { id: per_click, type: formula, expression: "round(amount / clicks, 4)" }
      rollups:
        - { name: spend_by_day, time_dimension: order_date, granularity: day, location_dimension: location_id, dimensions: [channel, region, month], measures: [amount, clicks, rows, biggest] }
    - id: by_code
      from: ${BY_CODE} JOIN locations ON locations.code = ${BY_CODE}.location_code
      dimensions:
        - { id: order_date, column: ${BY_CODE}.day }
        - { id: location_id, column: locations.id }
        - { id: channel, column: ${BY_CODE}.channel }
      metrics:
        - { id: code_amount, type: sql, expression: sum(${BY_CODE}.amount) }
      rollups:
        - { name: codes_by_month, time_dimension: order_date, granularity: month, location_dimension: location_id, dimensions: [channel], measures: [code_amount] }
${[
  widgetYaml("w_channel", "  data: { kind: dataset, dataset: spend, columns: [channel, amount, clicks, per_click] }"),
  widgetYaml("w_region_day", "  data: { kind: dataset, dataset: spend, columns: [order_date, region, amount, rows, biggest] }"),
  widgetYaml("w_month", "  data: { kind: dataset, dataset: spend, columns: [month, amount] }"),
  widgetYaml("w_fine", "  data: { kind: dataset, dataset: spend, columns: [clicks_each, amount] }"),
  widgetYaml("w_codes", "  data: { kind: dataset, dataset: by_code, columns: [channel, code_amount] }"),
  filterYaml("channel_in", "channel", "in"),
  filterYaml("location_in", "location_id", "in"),
  `---
version: "1.0"
kind: widget
metadata: { id: date, name: date }
spec:
  component: filter
  layout: { x: 0, y: 0, w: 1, h: 1 }
  display: { filter: { control: date, label: Day } }
  bindings: [{ target: "*", field: order_date, operator: date }]
`,
].join("")}`;

const DATA_WIDGETS = ["w_channel", "w_region_day", "w_month", "w_fine", "w_codes"];
let dashboard: ParsedDashboard;

/** Rows of one organization's spend: a row per location, day and channel over the last 120 days (seeded). */
function spendRows(orgId: string, seed: number, days = 120): string[][] {
  const next = seededRandom(seed);
  const rows: string[][] = [];
  for (let d = 0; d < days; d++) {
    const day = new Date(now.getTime() - d * 86_400_000).toISOString().slice(0, 10);
    for (const location of LOCATIONS[orgId]) {
      for (const channel of CHANNELS) {
        if (next() < 0.2) continue;
        rows.push([day, location.id, location.code, channel, (next() * 500).toFixed(2), String(Math.floor(next() * 90))]);
      }
    }
  }
  return rows;
}

const source = (rows: string[][]): RowSource => ({
  header: ["day", "location_id", "location_code", "channel", "amount", "clicks"],
  rows: (async function* () {
    yield* rows;
  })(),
});

async function load(orgId: string, mode: "create" | "append", rows: string[][]) {
  await loadTable({ orgId }, {
    table: SPEND,
    mode,
    onBadRow: "fail",
    locationColumn: mode === "create" ? { name: "location_id", by: "id" } : undefined,
    columns: [
      { name: "day", type: "date", from: 0 },
      { name: "location_id", type: "text", from: 1 },
      { name: "channel", type: "text", from: 3 },
      { name: "amount", type: "numeric", from: 4 },
      { name: "clicks", type: "integer", from: 5 },
    ],
  }, source(rows));
  await loadTable({ orgId }, {
    table: BY_CODE,
    mode,
    onBadRow: "fail",
    locationColumn: mode === "create" ? { name: "location_code", by: "code" } : undefined,
    columns: [
      { name: "day", type: "date", from: 0 },
      { name: "location_code", type: "text", from: 2 },
      { name: "channel", type: "text", from: 3 },
      { name: "amount", type: "numeric", from: 4 },
    ],
  }, source(rows));
}

const definitions = () => dashboardRollups(dashboard.datasets.values());

async function fresh(orgId: string): Promise<BuiltRollup[]> {
  return (await freshRollups({ orgId }, definitions(), ZONES[orgId])).fresh;
}

async function runAll(scope: TenantScope, filterValues: Record<string, unknown>, rollups: readonly BuiltRollup[] | undefined) {
  const base = { scope, dashboard, filterValues, now, timeZone: ZONES[scope.orgId], rollups };
  return withOwnTables(scope.orgId, () => runWidgets({ ...base, shared: sharedScans(DATA_WIDGETS.map((widgetId) => planWidget({ ...base, widgetId })), rollups) }, DATA_WIDGETS));
}

const withoutSource = (outcome: WidgetOutcome) => ("error" in outcome ? outcome : { ...outcome, source: undefined });
const sourceOf = (outcome: WidgetOutcome) => ("error" in outcome ? outcome.error : outcome.source?.kind === "rollup" ? outcome.source.name : (outcome.source?.kind ?? null));

/** Every widget from the rollups equals the tables' answer; returns each widget's source. */
async function expectExact(scope: TenantScope, filters: Record<string, unknown>, label: string): Promise<Record<string, string | null>> {
  const rollups = await fresh(scope.orgId);
  expect(rollups.length, label).toBe(definitions().length);
  const tables = await runAll(scope, filters, undefined);
  const routed = await runAll(scope, filters, rollups);
  for (const id of DATA_WIDGETS) {
    expect("error" in tables[id], `${label}, widget ${id}: ${JSON.stringify(tables[id])}`).toBe(false);
    expect(withoutSource(routed[id]), `${label}, widget ${id}`).toEqual(withoutSource(tables[id]));
  }
  return Object.fromEntries(DATA_WIDGETS.map((id) => [id, sourceOf(routed[id])]));
}

beforeAll(async () => {
  for (const orgId of Object.keys(ZONES)) {
    const { withTenant } = await import("@/lib/db/tenant");
    LOCATIONS[orgId] = await withTenant({ orgId }, (tx) => tx.$queryRawUnsafe<{ id: string; code: string }[]>("SELECT id, code FROM locations ORDER BY id"));
    await load(orgId, "create", spendRows(orgId, orgId === "org_acme" ? 42 : 7));
  }
  // The manifest check resolves the tables in the organization's own catalog (both have the same names and columns).
  const parsed = await withOwnTables("org_acme", async () => parseDashboardYaml(DASHBOARD, { sqlPolicy: SQL_ALLOW_LIST }));
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => `${e.line}:${e.column} ${e.message}`).join("\n"));
  dashboard = parsed.dashboard;
  expect(definitions().map((d) => d.name).sort()).toEqual(["codes_by_month", "spend_by_day"]);
  for (const orgId of Object.keys(ZONES)) {
    await publishRollups(orgId, definitions());
    const ids = new Set(definitions().map(rollupId));
    const outcomes = (await refreshOrganizationRollups(orgId)).filter((o) => ids.has(o.id));
    expect(outcomes.map((o) => [o.name, o.state, o.error]).sort()).toEqual([["codes_by_month", "ready", undefined], ["spend_by_day", "ready", undefined]]);
  }
}, 300_000);

describe("rollups over an organization's own tables", () => {
  it("answer widgets exactly as the tables do, for the organization, location-limited managers and another organization", async () => {
    const all = await expectExact({ orgId: "org_acme" }, {}, "defaults");
    expect(all).toMatchObject({ w_channel: "spend_by_day", w_region_day: "spend_by_day", w_month: "spend_by_day", w_codes: "codes_by_month", w_fine: "base" });
    const next = seededRandom(4242);
    const days = (from: number) => new Date(now.getTime() - from * 86_400_000).toISOString().slice(0, 10);
    for (let i = 0; i < 10; i++) {
      const orgId = next() < 0.7 ? "org_acme" : "org_globex";
      const ids = LOCATIONS[orgId].map((l) => l.id);
      const scope: TenantScope = next() < 0.5 ? { orgId } : { orgId, locationIds: ids.filter(() => next() < 0.5).slice(0, 3).concat(ids[0]) };
      const filters: Record<string, unknown> = { date: [null, "last 30 days", "this year", `${days(90)} to ${days(10)}`, "last month"][Math.floor(next() * 5)] };
      if (next() < 0.4) filters.channel_in = CHANNELS.filter(() => next() < 0.5);
      if (next() < 0.3) filters.location_in = ids.filter(() => next() < 0.5);
      await expectExact(scope, filters, `case ${i}: ${JSON.stringify({ scope, filters })}`);
    }
  }, 600_000);

  it("go stale when a load commits, and the refresh the load asks for rebuilds only the changed days, exactly", async () => {
    const orgId = "org_acme";
    expect((await fresh(orgId)).length).toBe(2);
    const before = await runAll({ orgId }, { date: "last 30 days" }, undefined);
    const day = new Date(now.getTime() - 3 * 86_400_000).toISOString().slice(0, 10);
    await load(orgId, "append", [[day, LOCATIONS[orgId][0].id, LOCATIONS[orgId][0].code, "email", "1000.01", "3"]]);
    const stale = await freshRollups({ orgId }, definitions(), ZONES[orgId]);
    expect(stale.fresh).toEqual([]);
    expect(stale.stale.length).toBe(2);
    // The tables answer meanwhile, with the new row.
    const after = await runAll({ orgId }, { date: "last 30 days" }, stale.fresh);
    expect(after.w_channel).not.toEqual(before.w_channel);
    expect(sourceOf(after.w_channel)).toBe("base");
    expect(await drainRollupQueue()).toBeGreaterThanOrEqual(1);
    const sources = await expectExact({ orgId }, { date: "last 30 days" }, "after the append");
    expect(sources.w_channel).toBe("spend_by_day");
    // Nothing changed since: the next refresh rewrites nothing.
    const ids = new Set(definitions().map(rollupId));
    expect((await refreshOrganizationRollups(orgId)).filter((o) => ids.has(o.id)).map((o) => o.state)).toEqual(["skipped", "skipped"]);
  }, 300_000);
});
