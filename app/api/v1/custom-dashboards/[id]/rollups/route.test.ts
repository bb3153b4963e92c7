import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import * as list from "@/app/api/v1/custom-dashboards/route";
import * as publish from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import * as query from "@/app/api/v1/custom-dashboards/[id]/query/route";
import * as rollups from "@/app/api/v1/custom-dashboards/[id]/rollups/route";
import type { DashboardRollup } from "@/lib/dashboards/contract";
import { SCOPED_FAILURE } from "@/lib/dashboards/dashboard-rollups";
import { withTenant } from "@/lib/db/tenant";
import { drainRollupQueue } from "@/lib/rollups/jobs";
import { call, tokenFor } from "@/test/helpers";

/*
 * GET /api/v1/custom-dashboards/{id}/rollups (issue 31 §2, "the editor shows which widgets a rollup
 * serves"): the draft's rollups with their build state, and the widgets each answers under the default
 * filters, always in agreement with the `source` the query endpoint reports for the same widgets.
 */
const YAML = fs.readFileSync(path.join(import.meta.dirname, "../../../../../../docs/manifests/sample-dashboard.yaml"), "utf8").replace("sample-sales", "rollup-status");
const NAMES = ["sales_by_location_day", "sales_by_channel_category_day", "orders_by_day"];
let admin: string;
let dashboardId: string;

interface Status {
  dashboard_id: string;
  rollups: DashboardRollup[];
  base_widgets: { id: string; title: string }[];
}

beforeAll(async () => {
  admin = await tokenFor("acme", "admin");
  const created = await call(list.POST, "POST", "/api/v1/custom-dashboards", { token: admin, body: { name: "Rollup status", slug: "rollup-status", spec_yaml: YAML } });
  expect(created.status).toBe(201);
  dashboardId = created.json.id;
});

async function status(token = admin): Promise<Status> {
  const res = await call(rollups.GET, "GET", { token, params: { id: dashboardId } });
  expect(res.status).toBe(200);
  return res.json as Status;
}

/** Each widget's source as the query endpoint reports it for the draft under the default filters. */
async function sources(): Promise<Record<string, string>> {
  const res = await call(query.POST, "POST", { token: admin, params: { id: dashboardId }, body: { version: "draft", refresh: true } });
  expect(res.status).toBe(200);
  const widgets = res.json.widgets as Record<string, { source?: { kind: string; name?: string } }>;
  return Object.fromEntries(Object.entries(widgets).flatMap(([id, w]) => (w.source ? [[id, w.source.kind === "rollup" ? w.source.name! : "base"]] : [])));
}

/** The status's answer as widget -> rollup name (or base), to compare with the query's. */
function served(body: Status): Record<string, string> {
  return Object.fromEntries([...body.rollups.flatMap((r) => r.widgets.map((w) => [w.id, r.name])), ...body.base_widgets.map((w) => [w.id, "base"])]);
}

describe("GET /api/v1/custom-dashboards/{id}/rollups", () => {
  it("lists the draft's rollups as not built before publishing, every data widget reading the tables", async () => {
    const body = await status();
    expect(body.dashboard_id).toBe(dashboardId);
    expect(body.rollups.map((r) => [r.name, r.state, r.error, r.widgets])).toEqual(NAMES.map((name) => [name, "not_built", null, []]));
    expect(body.rollups.find((r) => r.name === "orders_by_day")?.dataset).toBe("order_totals");
    expect(body.base_widgets.find((w) => w.id === "revenue_by_location")?.title).toEqual(expect.any(String));
    expect(served(body)).toEqual(await sources());
  });

  it("follows the build (building, then ready) and names the widgets each rollup answers, as the query endpoint does", async () => {
    expect((await call(publish.POST, "POST", { token: admin, params: { id: dashboardId } })).status).toBe(200);
    expect((await status()).rollups.map((r) => r.state)).toEqual(NAMES.map(() => "building"));

    let ran = 0;
    for (const deadline = Date.now() + 150_000; ran === 0 && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      ran = await drainRollupQueue();
    }
    expect(ran).toBeGreaterThan(0);
    const ready = await status();
    expect(ready.rollups.map((r) => r.state)).toEqual(NAMES.map(() => "ready"));
    const byName = Object.fromEntries(ready.rollups.map((r) => [r.name, r.widgets.map((w) => w.id)]));
    expect(byName.sales_by_location_day).toContain("revenue_by_location");
    expect(byName.sales_by_channel_category_day).toContain("channel_mix");
    expect(byName.orders_by_day).toContain("revenue_kpi");
    expect(ready.base_widgets.map((w) => w.id)).toContain("order_grid");
    expect(served(ready)).toEqual(await sources());
  }, 240_000);

  it("shows a failed build with its reason; its widgets go where the query sends them", async () => {
    const reason = "the aggregate has more than 200000 rows: declare fewer or coarser dimensions";
    await withTenant({ orgId: "org_acme" }, (tx) => tx.$executeRaw`UPDATE rollups SET state = 'failed', error = ${reason} WHERE name = 'orders_by_day'`);
    const body = await status();
    expect(body.rollups.find((r) => r.name === "orders_by_day")).toMatchObject({ state: "failed", error: reason, widgets: [] });
    expect(served(body).revenue_kpi).not.toBe("orders_by_day");
    expect(served(body)).toEqual(await sources());
  });

  it("is for editors: an analyst is refused (403), a manager of one location is not told a build's database error, another organization sees nothing (404)", async () => {
    const analyst = await tokenFor("acme", "analyst");
    expect((await call(rollups.GET, "GET", { token: analyst, params: { id: dashboardId } })).status).toBe(403);
    const gm = await tokenFor("acme", "general_manager", { locationIds: ["loc_acme_nyc"] });
    const scoped = await status(gm);
    expect(scoped.rollups.map((r) => r.name)).toEqual(NAMES);
    // The failed build of the test before: a build reads every location, so its reason is not for a manager of one.
    expect(scoped.rollups.find((r) => r.name === "orders_by_day")).toMatchObject({ state: "failed", error: SCOPED_FAILURE });
    const globex = await tokenFor("globex", "admin");
    const other = await call(rollups.GET, "GET", { token: globex, params: { id: dashboardId } });
    expect(other.status).toBe(404);
    expect(JSON.stringify(other.json)).not.toContain("orders_by_day");
  });
});
