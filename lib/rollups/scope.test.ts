import { beforeAll, describe, expect, it } from "vitest";
import * as apiKeys from "@/app/api/v1/api-keys/route";
import * as list from "@/app/api/v1/custom-dashboards/route";
import * as publish from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import * as query from "@/app/api/v1/custom-dashboards/[id]/query/route";
import * as rollupsRoute from "@/app/api/v1/custom-dashboards/[id]/rollups/route";
import { findOrganization } from "@/lib/auth/directory";
import { parseManifest } from "@/lib/dashboards/manifest";
import { withOwnTables } from "@/lib/db/own-tables";
import { type TenantScope, withTenant } from "@/lib/db/tenant";
import { runReadOnly } from "@/lib/query/execute";
import { dashboardRollups } from "@/lib/query/rollup-definition";
import type { BuiltRollup } from "@/lib/query/rollup-routing";
import { type WidgetOutcome, publishRollups, runWidgets, sampleWithExtras, widgetYaml } from "@/test/support/sample-variants";
import { call, tokenFor } from "@/test/helpers";
import { refreshOrganizationRollups } from "./build";
import { CURRENT_VERSION_SQL, freshRollups, rollupId, rollupStates } from "./registry";

/*
 * Rollups that cannot widen a location scope (issue 41 §4, docs/rollups.md "Scope"). The two manifests of the
 * review (a location dimension over orders CROSS JOIN locations; a dimension that is a scalar subquery over
 * orders) are refused at save; stored past the check, they do not build, and one built before the rule is not
 * used. A two-location general manager, a scoped analyst and a one-location API key are answered from the
 * rollups with exactly what the tables give them under row-level security; an admin still gets the rollups;
 * a rollup without a location dimension answers unscoped callers only, and its rows are not readable by a
 * scoped one.
 */

const ORG = "org_acme";
/** The organization's own zone, which builds cut days in (set in beforeAll). */
let ZONE = "UTC";

const ATTACKS = `
    - id: widened
      from: orders CROSS JOIN locations
      dimensions:
        - { id: order_date, column: orders.order_date }
        - { id: location_id, column: locations.id }
      metrics:
        - { id: revenue, type: sql, expression: sum(orders.amount) }
      rollups:
        - { name: widened_by_location, time_dimension: order_date, granularity: day, location_dimension: location_id, measures: [revenue] }
    - id: everything
      from: orders
      dimensions:
        - { id: order_date, column: orders.order_date }
        - { id: location_id, column: orders.location_id }
        # Past the lexer: SELECT before a parenthesis reads as a call, the table is qualified.
        - { id: total, column: "(SELECT(sum(o2.amount)) FROM public.orders AS o2)::text" }
      metrics:
        - { id: revenue, type: sql, expression: sum(orders.amount) }
      rollups:
        - { name: everything_total, time_dimension: order_date, granularity: day, location_dimension: location_id, dimensions: [total], measures: [revenue] }`;
const ATTACK_WIDGETS = [
  widgetYaml("w_widened", "  data: { kind: dataset, dataset: widened, columns: [location_id, revenue] }"),
  widgetYaml("w_everything", "  data: { kind: dataset, dataset: everything, columns: [total, revenue] }"),
].join("");

// Past the browser's check (no parser there): what a stored manifest predating the rule holds.
let attackYaml = "";
const attacks = sampleWithExtras(ATTACKS, ATTACK_WIDGETS, (yaml) => (attackYaml = yaml));
const attackDefinitions = dashboardRollups([attacks.datasets.get("widened")!, attacks.datasets.get("everything")!]);

/** A rollup without a location dimension: products carry no location. */
const CATALOG = `
    - id: catalog
      from: products
      dimensions:
        - { id: category, column: products.category }
        - { id: listed, column: "make_date(2024, 1, 1)" }
      metrics:
        - { id: items, type: sql, expression: count(*) }
      rollups:
        - { name: items_by_category, time_dimension: listed, granularity: day, dimensions: [category], measures: [items] }`;
const CATALOG_WIDGET = widgetYaml("catalog_items", "  data: { kind: dataset, dataset: catalog, columns: [category, items] }");

/** The sample with the catalog dataset and its widget (placed in the first tab, so it is served), as a dashboard is saved. */
let catalogYaml = "";
const catalog = sampleWithExtras(CATALOG, CATALOG_WIDGET, (yaml) => {
  catalogYaml = yaml.replace("sample-sales", "scoped-rollups").replace("widgets: [date, location_filter, revenue_kpi,", "widgets: [date, location_filter, catalog_items, revenue_kpi,");
  return catalogYaml;
});

const GM_LOCATIONS = ["loc_acme_nyc", "loc_acme_bos"];
const ANALYST_LOCATIONS = ["loc_acme_chi", "loc_acme_aus", "loc_acme_sfo"];
const KEY_LOCATIONS = ["loc_acme_sfo"];

const withoutSource = (outcome: WidgetOutcome) => ("error" in outcome ? outcome : { ...outcome, source: undefined });
const sourceOf = (outcome: WidgetOutcome) => ("error" in outcome ? outcome.error : outcome.source?.kind === "rollup" ? outcome.source.name : outcome.source?.kind);

/** The organization's revenue of `locations` (all when null) as the tables give it under row-level security. */
async function revenueUnderRls(scope: TenantScope): Promise<number> {
  const [row] = await runReadOnly(scope, "SELECT json_build_object('total', coalesce(sum(amount), 0)::text) AS row FROM orders", [], { timeZone: ZONE });
  return Number(row.total);
}

describe("rollups cannot widen a location scope", () => {
  beforeAll(async () => {
    ZONE = (await findOrganization(ORG))!.timeZone;
  });

  it("refuses both attack manifests at save, naming the rollup's part and why", async () => {
    expect(attackDefinitions).toHaveLength(2);
    // Saved as acme's work: the sample reads its own marketing_spend (issue 42).
    const [saved, ok] = await withOwnTables(ORG, async () => [parseManifest(attackYaml), parseManifest(catalogYaml)]);
    expect(saved.ok).toBe(false);
    const messages = saved.ok ? "" : saved.errors.map((e) => `${e.loc.join(".")}: ${e.msg}`).join("\n");
    expect(messages).toMatch(/rollups\.0\.location_dimension.*orders is not joined to locations on equal locations/);
    expect(messages).toMatch(/rollups\.0\.dimensions\.0.*it holds a subquery/);
    // The catalog's rollup (no location-scoped table) and the sample's own pass.
    expect(ok.ok ? [] : ok.errors.map((e) => e.msg)).toEqual([]);
  });

  it("a stored attack does not build, and one built before the rule is not used and is then removed", async () => {
    await publishRollups(ORG, attackDefinitions);
    const outcomes = await refreshOrganizationRollups(ORG);
    for (const definition of attackDefinitions) {
      const outcome = outcomes.find((o) => o.id === rollupId(definition))!;
      expect(outcome.state, definition.name).toBe("failed");
      expect(outcome.error).toMatch(/^refused: /);
    }
    const [widened, everything] = attackDefinitions.map(rollupId);

    // A build from before the rule: the cross join's rows, one per location, each holding every order.
    await withTenant({ orgId: ORG }, async (tx) => {
      await tx.$executeRawUnsafe(
        `INSERT INTO rollup_rows (org_id, rollup_id, location_id, bucket, key, measures)
         SELECT $1, $2, locations.id, orders.order_date, '{}'::jsonb, jsonb_build_object('m0', sum(orders.amount))
           FROM orders CROSS JOIN locations GROUP BY locations.id, orders.order_date`,
        ORG,
        widened,
      );
      await tx.$executeRawUnsafe(
        `UPDATE rollups SET state = 'ready', error = NULL, time_zone = $2, built_version = ${CURRENT_VERSION_SQL},
                column_types = '{"time": "date", "dimensions": {}, "measures": {"sum(orders.amount)": "numeric"}}'::jsonb,
                row_count = (SELECT count(*) FROM rollup_rows WHERE rollup_id = $1) WHERE id = $1`,
        widened,
        ZONE,
      );
    });
    const scope = { orgId: ORG, locationIds: GM_LOCATIONS };
    const forged: BuiltRollup = {
      id: widened,
      name: "widened_by_location",
      definition: attackDefinitions[0],
      types: { time: "date", dimensions: {}, measures: { "sum(orders.amount)": "numeric" } },
      rowCount: 1,
    };
    const base = { scope, dashboard: attacks, filterValues: { date: null }, now: new Date(), timeZone: ZONE };
    const tables = await runWidgets({ ...base, rollups: undefined }, ["w_widened"]);
    // Handed to routing, the forged rollup widens the manager's scope: the attack is real.
    const leaked = await runWidgets({ ...base, rollups: [forged] }, ["w_widened"]);
    expect(sourceOf(leaked.w_widened)).toBe("widened_by_location");
    expect(withoutSource(leaked.w_widened)).not.toEqual(withoutSource(tables.w_widened));

    // The registry never offers it, to a scoped caller or any other, and says why.
    for (const caller of [scope, { orgId: ORG }]) expect((await freshRollups(caller, attackDefinitions, ZONE)).fresh).toEqual([]);
    const states = await rollupStates(ORG, attackDefinitions, ZONE);
    expect(states.get(widened)).toMatchObject({ state: "failed", error: expect.stringMatching(/^refused: .*not joined to locations/) });
    expect(states.get(everything)).toMatchObject({ state: "failed", error: expect.stringMatching(/^refused: .*subquery/) });
    const routed = await runWidgets({ ...base, rollups: (await freshRollups(scope, attackDefinitions, ZONE)).fresh }, ["w_widened", "w_everything"]);
    expect(sourceOf(routed.w_widened)).toBe("base");
    expect(withoutSource(routed.w_widened)).toEqual(withoutSource(tables.w_widened));

    // The next refresh marks it failed and removes its rows.
    await refreshOrganizationRollups(ORG);
    const left = await withTenant({ orgId: ORG }, (tx) => tx.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM rollup_rows WHERE rollup_id = ANY (${[widened, everything]})`);
    expect(left).toEqual([{ n: 0 }]);
  }, 300_000);

  it("a general manager of two locations, a scoped analyst and a one-location API key get exactly their locations' sums from the rollups; an admin still gets the rollups", async () => {
    const admin = await tokenFor("acme", "admin");
    const created = await call(list.POST, "POST", "/api/v1/custom-dashboards", { token: admin, body: { name: "Scoped rollups", slug: "scoped-rollups", spec_yaml: catalogYaml } });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    const key = await call(apiKeys.POST, "POST", { token: admin, body: { name: "one location", scopes: ["dashboards:read"], location_ids: KEY_LOCATIONS } });
    expect(key.status).toBe(201);
    const callers: [string, string, string[] | null][] = [
      ["admin", admin, null],
      ["general manager", await tokenFor("acme", "general_manager", { locationIds: GM_LOCATIONS }), GM_LOCATIONS],
      ["analyst", await tokenFor("acme", "analyst", { locationIds: ANALYST_LOCATIONS }), ANALYST_LOCATIONS],
      ["API key", key.json.key as string, KEY_LOCATIONS],
    ];
    const ask = async (token: string) => {
      const res = await call(query.POST, "POST", { token, params: { id }, body: { filters: { date: null }, refresh: true } });
      expect(res.status).toBe(200);
      return res.json.widgets as Record<string, { rows: Record<string, unknown>[]; error: unknown; source?: { kind: string; name?: string } }>;
    };
    expect((await call(publish.POST, "POST", { token: admin, params: { id } })).status).toBe(200);
    // Before the build, the tables answer each caller under row-level security.
    const before = new Map<string, Awaited<ReturnType<typeof ask>>>();
    for (const [who, token] of callers) before.set(who, await ask(token));
    const built = await refreshOrganizationRollups(ORG);
    // The attacks stored by the test before stay refused; everything the sample declares builds.
    const attackIds = attackDefinitions.map(rollupId);
    expect(built.filter((o) => o.state === "failed" && !attackIds.includes(o.id))).toEqual([]);

    for (const [who, token, locations] of callers) {
      const after = await ask(token);
      expect(after.revenue_by_location.source, who).toEqual({ kind: "rollup", name: "sales_by_location_day" });
      expect(after.revenue_kpi.source, who).toEqual({ kind: "rollup", name: "orders_by_day" });
      for (const [widget, answer] of Object.entries(after)) expect(answer.rows, `${who}, ${widget}`).toEqual(before.get(who)![widget].rows);
      // Exactly the sum of the caller's locations, as the tables give it under row-level security.
      const expected = await revenueUnderRls({ orgId: ORG, locationIds: locations });
      expect(Number(after.revenue_kpi.rows[0].value), who).toBeCloseTo(expected, 2);
      const perLocation = after.revenue_by_location.rows;
      expect(perLocation.reduce((sum, row) => sum + Number(row.revenue), 0), who).toBeCloseTo(expected, 2);
      if (locations) expect(perLocation.length, who).toBe(locations.length);
      // The rollup without a location dimension answers only callers who see every location.
      expect(after.catalog_items.source, who).toEqual(locations ? { kind: "base" } : { kind: "rollup", name: "items_by_category" });
      // The editor's rollup list says the same as the query (one rule, answersScope): the tables serve a scoped editor.
      if (who === "admin" || who === "general manager") {
        const listed = await call(rollupsRoute.GET, "GET", { token, params: { id } });
        expect(listed.status, listed.text).toBe(200);
        const catalogRollup = (listed.json.rollups as { name: string; widgets: { id: string }[] }[]).find((r) => r.name === "items_by_category")!;
        expect(catalogRollup.widgets.map((w) => w.id).includes("catalog_items"), who).toBe(!locations);
        expect((listed.json.base_widgets as { id: string }[]).map((w) => w.id).includes("catalog_items"), who).toBe(Boolean(locations));
      }
    }
    expect(await revenueUnderRls({ orgId: ORG, locationIds: GM_LOCATIONS })).toBeLessThan(await revenueUnderRls({ orgId: ORG }));
  }, 300_000);

  it("a scoped caller reads no rollup row without a location; one who sees every location reads them", async () => {
    const [definition] = dashboardRollups([catalog.datasets.get("catalog")!]);
    const rows = async (scope: TenantScope) =>
      runReadOnly(scope, "SELECT json_build_object('n', count(*)::int) AS row FROM rollup_rows WHERE rollup_id = $1", [rollupId(definition)], { timeZone: ZONE });
    expect(await rows({ orgId: ORG })).not.toEqual([{ n: 0 }]);
    for (const locationIds of [GM_LOCATIONS, KEY_LOCATIONS]) expect(await rows({ orgId: ORG, locationIds })).toEqual([{ n: 0 }]);
    expect((await freshRollups({ orgId: ORG, locationIds: KEY_LOCATIONS }, [definition], ZONE)).fresh).toEqual([]);
    expect((await freshRollups({ orgId: ORG }, [definition], ZONE)).fresh.map((r) => r.name)).toEqual(["items_by_category"]);
  });
});
