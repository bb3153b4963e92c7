import { beforeAll, describe, expect, it } from "vitest";
import * as planRoute from "@/app/api/v1/custom-dashboards/%5Fplan/route";
import * as applyRoute from "@/app/api/v1/custom-dashboards/%5Fapply/route";
import * as query from "@/app/api/v1/custom-dashboards/[id]/query/route";
import * as embed from "@/app/api/v1/custom-dashboards/[id]/embed/route";
import * as embedQuery from "@/app/api/v1/embed/query/route";
import * as member from "@/app/api/v1/members/[id]/route";
import { toCsv } from "@/lib/export-cells";
import { call, tokenFor, tokenForMember } from "@/test/helpers";

/*
 * Field policies (issue 48 §4) on the real database, through the routes every surface uses: the dashboard query
 * endpoint (what pages, reports, alerts and the API read), the grid export made from its rows, embeds with and
 * without a signed attribute, and the member attributes API. Three roles see one dashboard three ways; a derived
 * metric carries the restriction of what it reads; cached answers never cross a policy difference; another
 * organization sees nothing.
 */

const DASHBOARD = `version: "1.0"
kind: dashboard
metadata: { id: field-policies, name: Field policies }
platform: { allow_embed: true }
spec:
  datasets:
    - id: sales
      from: orders JOIN locations ON locations.id = orders.location_id
      dimensions:
        - { id: channel, column: orders.channel }
        - { id: city, column: locations.city, access: { roles: [admin, general_manager], mask: "left(locations.city, 1) || '***'" } }
        - { id: customer, column: orders.customer_id, access: { hidden: true } }
      metrics:
        - { id: revenue, type: sql, expression: sum(orders.amount) }
        - { id: cost, type: sql, expression: sum(orders.cost), access: { roles: [admin] } }
        - { id: margin, type: formula, expression: "(revenue - cost) / revenue" }
        - { id: finance_revenue, type: sql, expression: sum(orders.amount), access: { attributes: { team: [finance] } } }
  tabs:
    - { id: main, name: Main, widgets: [city_filter, revenue_kpi, margin_kpi, finance_kpi, by_city, grid] }
---
version: "1.0"
kind: widget
metadata: { id: city_filter, name: City }
spec:
  component: filter
  layout: { x: 0, y: 0, w: 3, h: 2 }
  display: { filter: { control: select } }
  bindings:
    - { target: by_city, field: city, operator: eq }
---
version: "1.0"
kind: widget
metadata: { id: revenue_kpi, name: Revenue }
spec:
  component: kpi
  layout: { x: 0, y: 2, w: 3, h: 2 }
  data: { kind: dataset, dataset: sales, columns: [revenue], mappings: { value: revenue } }
---
version: "1.0"
kind: widget
metadata: { id: margin_kpi, name: Margin }
spec:
  component: kpi
  layout: { x: 3, y: 2, w: 3, h: 2 }
  data: { kind: dataset, dataset: sales, columns: [margin], mappings: { value: margin } }
---
version: "1.0"
kind: widget
metadata: { id: finance_kpi, name: Finance revenue }
spec:
  component: kpi
  layout: { x: 6, y: 2, w: 3, h: 2 }
  data: { kind: dataset, dataset: sales, columns: [finance_revenue], mappings: { value: finance_revenue } }
---
version: "1.0"
kind: widget
metadata: { id: by_city, name: By city }
spec:
  component: table
  layout: { x: 0, y: 4, w: 6, h: 4 }
  data: { kind: dataset, dataset: sales, columns: [city, revenue, cost] }
---
version: "1.0"
kind: widget
metadata: { id: grid, name: Grid }
spec:
  component: tabulator
  layout: { x: 6, y: 4, w: 6, h: 4 }
  data: { kind: dataset, dataset: sales }
  display: { tabulator: { export: [csv] } }
`;

interface Result {
  columns: string[];
  rows: Record<string, unknown>[];
  error: { detail: string } | null;
  cached: boolean;
  restricted?: string;
}

let admin: string, manager: string, analyst: string, financeAnalyst: string, globex: string;
let dashboardId: string;

async function widgets(token: string, body: Record<string, unknown> = { refresh: true }): Promise<Record<string, Result>> {
  const res = await call(query.POST, "POST", { token, params: { id: dashboardId }, body });
  expect(res.status, res.text).toBe(200);
  return res.json.widgets;
}

const cities = (result: Result) => result.rows.map((r) => r.city as string).sort();

beforeAll(async () => {
  [admin, manager, analyst, globex] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "general_manager"), tokenFor("acme", "analyst"), tokenFor("globex", "admin")]);
  financeAnalyst = await tokenForMember("acme", "analyst", "usr_acme_finance_analyst");
  const files = [{ path: "dashboards/field-policies.yaml", content: DASHBOARD }];
  const planned = await call(planRoute.POST, "POST", { token: admin, body: { files } });
  expect(planned.status, planned.text).toBe(200);
  const applied = await call(applyRoute.POST, "POST", { token: admin, body: { files, expected: planned.json.expected, expected_datasets: planned.json.expected_datasets, publish: true } });
  expect(applied.status, applied.text).toBe(200);
  dashboardId = applied.json.items.find((i: { slug: string }) => i.slug === "field-policies").dashboard_id;
});

describe("field policies through the query endpoint", () => {
  it("an admin sees every field as it is; hidden stays absent even for an admin", async () => {
    const w = await widgets(admin);
    expect(w.by_city.columns).toEqual(["city", "revenue", "cost"]);
    expect(cities(w.by_city).every((c) => !c.endsWith("***"))).toBe(true);
    expect(Number(w.margin_kpi.rows[0].margin)).toBeGreaterThan(0);
    expect(w.margin_kpi.restricted).toBeUndefined();
    // The grid names no columns: it selects what the viewer sees, and `customer` (hidden) is not among them, not even as null.
    expect(w.grid.columns).toEqual(["channel", "city", "revenue", "cost", "margin"]);
    expect(w.grid.rows.every((r) => !("customer" in r) && !("finance_revenue" in r))).toBe(true);
  });

  it("a manager sees the city but not the admin-only cost, nor the margin derived from it", async () => {
    const [w, full] = [await widgets(manager), await widgets(admin)];
    expect(w.by_city.columns).toEqual(["city", "revenue"]);
    expect(w.by_city.rows.every((r) => !("cost" in r))).toBe(true);
    expect(cities(w.by_city)).toEqual(cities(full.by_city));
    expect(w.margin_kpi).toMatchObject({ rows: [], columns: [], error: null });
    expect(w.margin_kpi.restricted).toBe("This widget needs fields you may not see: 'margin' is restricted for your role.");
    expect(w.revenue_kpi.rows).toEqual(full.revenue_kpi.rows);
  });

  it("an analyst sees the city masked, the same totals, and no restricted column", async () => {
    const [w, full] = [await widgets(analyst), await widgets(admin)];
    expect(w.by_city.columns).toEqual(["city", "revenue"]);
    const masked = cities(w.by_city);
    expect(masked.length).toBeGreaterThan(0);
    expect(masked.every((c) => /^.\*\*\*$/.test(c))).toBe(true);
    // Grouped by the mask: cities sharing a first letter are one row, and the total is the same.
    const total = (r: Result) => r.rows.reduce((sum, row) => sum + Number(row.revenue), 0);
    expect(total(w.by_city)).toBeCloseTo(total(full.by_city), 2);
    expect(w.margin_kpi.restricted).toMatch(/'margin' is restricted/);
    expect(w.finance_kpi.restricted).toMatch(/'finance_revenue' is restricted/);
    expect(w.grid.columns).toEqual(["channel", "city", "revenue"]);
    expect(w.grid.rows.every((r) => Object.keys(r).join() === "channel,city,revenue")).toBe(true);
  });

  it("the grid export holds what the viewer's rows hold: no absent column, the mask for the masked one", async () => {
    const grid = (await widgets(analyst)).grid;
    const csv = toCsv([grid.columns, ...grid.rows.map((r) => grid.columns.map((c) => r[c]))]);
    expect(csv.split("\r\n")[0]).toBe("\uFEFFchannel,city,revenue");
    const adminCities = new Set(cities((await widgets(admin)).by_city));
    for (const city of adminCities) expect(csv).not.toContain(`,${city},`);
  });

  it("a filter value on a field the viewer sees masked is refused with 403; the admin may filter by it", async () => {
    const [first] = cities((await widgets(admin)).by_city);
    const refused = await call(query.POST, "POST", { token: analyst, params: { id: dashboardId }, body: { filters: { city_filter: first } } });
    expect(refused.status).toBe(403);
    expect(refused.json.detail).toBe("Filter 'city_filter' cannot be applied to 'by_city': its field 'city' is masked for you");
    const allowed = await widgets(admin, { filters: { city_filter: first } });
    expect(cities(allowed.by_city)).toEqual([first]);
    // Cleared (null), the filter sets nothing: the analyst's request is answered.
    expect((await widgets(analyst, { filters: { city_filter: null } })).by_city.rows.length).toBeGreaterThan(0);
  });

  it("the cache keeps each policy's answer apart: an admin's answer is never served to an analyst, and back", async () => {
    const fresh = await widgets(admin);
    const forAdmin = await widgets(admin, {});
    expect(forAdmin.by_city.cached).toBe(true);
    expect(forAdmin.by_city.rows).toEqual(fresh.by_city.rows);
    const forAnalyst = await widgets(analyst, {});
    expect(cities(forAnalyst.by_city).every((c) => c.endsWith("***"))).toBe(true);
    expect(forAnalyst.by_city.columns).toEqual(["city", "revenue"]);
    const again = await widgets(analyst, {});
    expect(again.by_city.cached).toBe(true);
    expect(again.by_city.rows).toEqual(forAnalyst.by_city.rows);
    const adminAgain = await widgets(admin, {});
    expect(adminAgain.by_city.rows).toEqual(fresh.by_city.rows);
    // Revenue alone reads no restricted field: every role shares one answer.
    expect(again.revenue_kpi.cached).toBe(true);
    expect(again.revenue_kpi.rows).toEqual(fresh.revenue_kpi.rows);
  });
});

describe("preview as", () => {
  it("an organization admin previews the dashboard as a role: that role's masks and restrictions; anyone else is refused", async () => {
    const [asAnalyst, analystOwn] = [await widgets(admin, { refresh: true, preview_as: "analyst" }), await widgets(analyst)];
    for (const id of ["by_city", "grid", "margin_kpi", "finance_kpi", "revenue_kpi"]) {
      expect({ id, columns: asAnalyst[id].columns, rows: asAnalyst[id].rows, restricted: asAnalyst[id].restricted }).toEqual({
        id,
        columns: analystOwn[id].columns,
        rows: analystOwn[id].rows,
        restricted: analystOwn[id].restricted,
      });
    }
    const refused = await call(query.POST, "POST", { token: manager, params: { id: dashboardId }, body: { preview_as: "analyst" } });
    expect(refused.status).toBe(403);
    expect(refused.json.detail).toBe("Only organization admins may preview a dashboard as another role");
    expect((await call(query.POST, "POST", { token: admin, params: { id: dashboardId }, body: { preview_as: "cashier" } })).status).toBe(422);
  });
});

describe("member attributes and embeds", () => {
  it("an admin sets a member's attributes; the member then sees the attribute-restricted metric, others still not", async () => {
    const bad = await call(member.PATCH, "PATCH", { token: admin, params: { id: "usr_acme_finance_analyst" }, body: { attributes: { Team: ["finance"] } } });
    expect(bad.status).toBe(422);
    expect((await call(member.PATCH, "PATCH", { token: manager, params: { id: "usr_acme_finance_analyst" }, body: { attributes: { team: ["finance"] } } })).status).toBe(403);
    const set = await call(member.PATCH, "PATCH", { token: admin, params: { id: "usr_acme_finance_analyst" }, body: { attributes: { team: ["finance"] } } });
    expect(set.status, set.text).toBe(200);
    expect(set.json.attributes).toEqual({ team: ["finance"] });
    const finance = await widgets(financeAnalyst, {});
    expect(finance.finance_kpi.restricted).toBeUndefined();
    expect(finance.finance_kpi.rows).toEqual((await widgets(admin)).revenue_kpi.rows.map((r) => ({ finance_revenue: r.revenue })));
    // Still an analyst: the city stays masked and the margin restricted.
    expect(cities(finance.by_city).every((c) => c.endsWith("***"))).toBe(true);
    expect(finance.margin_kpi.restricted).toBeDefined();
    expect((await widgets(analyst, {})).finance_kpi.restricted).toBeDefined();
  });

  it("an embed has no role: role-restricted fields are masked or absent; a signed attribute admits its metric", async () => {
    const plain = await call(embed.POST, "POST", { token: admin, params: { id: dashboardId }, body: {} });
    const signed = await call(embed.POST, "POST", { token: admin, params: { id: dashboardId }, body: { attributes: { team: ["finance"] } } });
    expect(plain.status, plain.text).toBeLessThan(300);
    expect(signed.status, signed.text).toBeLessThan(300);
    const embedded = async (token: string) => {
      const res = await call(embedQuery.POST, "POST", { body: { token } });
      expect(res.status, res.text).toBe(200);
      return res.json.widgets as Record<string, Result>;
    };
    const [a, b] = [await embedded(plain.json.token), await embedded(signed.json.token)];
    expect(a.finance_kpi.restricted).toMatch(/'finance_revenue' is restricted/);
    expect(b.finance_kpi.restricted).toBeUndefined();
    expect(Number(b.finance_kpi.rows[0].finance_revenue)).toBeGreaterThan(0);
    for (const w of [a, b]) {
      expect(w.by_city.columns).toEqual(["city", "revenue"]);
      expect(cities(w.by_city).every((c) => c.endsWith("***"))).toBe(true);
      expect(w.margin_kpi.restricted).toBeDefined();
    }
    // A general manager may sign only attributes they hold (they hold none).
    const refused = await call(embed.POST, "POST", { token: manager, params: { id: dashboardId }, body: { attributes: { team: ["finance"] } } });
    expect(refused.status).toBe(403);
    expect(refused.json.detail).toContain("team=finance");
  });

  it("another organization sees nothing of the dashboard", async () => {
    const res = await call(query.POST, "POST", { token: globex, params: { id: dashboardId }, body: {} });
    expect(res.status).toBe(404);
    expect((await call(member.PATCH, "PATCH", { token: globex, params: { id: "usr_acme_finance_analyst" }, body: { attributes: { team: ["finance"] } } })).status).toBe(404);
  });
});
