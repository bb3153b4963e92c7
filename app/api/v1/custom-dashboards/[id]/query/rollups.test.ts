import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import * as list from "@/app/api/v1/custom-dashboards/route";
import * as publish from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import * as query from "@/app/api/v1/custom-dashboards/[id]/query/route";
import { withTenant } from "@/lib/db/tenant";
import { drainRollupQueue } from "@/lib/rollups/jobs";
import { call, tokenFor } from "@/test/helpers";

// The bundled sample declares three rollups (docs/manifests/sample-dashboard.yaml).
const YAML = fs.readFileSync(path.join(import.meta.dirname, "../../../../../../docs/manifests/sample-dashboard.yaml"), "utf8").replace("sample-sales", "rollup-sales");
let admin: string;
let gm: string;
let dashboardId: string;

beforeAll(async () => {
  [admin, gm] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "general_manager", { locationIds: ["loc_acme_nyc", "loc_acme_bos", "loc_acme_chi"] })]);
  const created = await call(list.POST, "POST", "/api/v1/custom-dashboards", { token: admin, body: { name: "Rollups", slug: "rollup-sales", spec_yaml: YAML } });
  expect(created.status).toBe(201);
  dashboardId = created.json.id;
});

async function ask(token: string, refresh = true) {
  const res = await call(query.POST, "POST", { token, params: { id: dashboardId }, body: { filters: { date: "this year" }, refresh } });
  expect(res.status).toBe(200);
  return res.json.widgets as Record<string, { rows: unknown[]; error: unknown; source?: { kind: string; name?: string } }>;
}

const rowsOf = (widgets: Awaited<ReturnType<typeof ask>>) => Object.fromEntries(Object.entries(widgets).map(([id, w]) => [id, w.rows]));

describe("POST /api/v1/custom-dashboards/{id}/query with rollups", () => {
  it("publishing declares the rollups, the worker builds them, and the query result says which source answered", async () => {
    expect((await call(publish.POST, "POST", { token: admin, params: { id: dashboardId } })).status).toBe(200);
    const declared = await withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRaw<{ name: string; state: string }[]>`SELECT name, state FROM rollups ORDER BY name`);
    expect(declared.map((r) => r.name)).toEqual(["orders_by_day", "sales_by_channel_category_day", "sales_by_location_day"]);

    // Before the worker has built them, the tables answer.
    const before = await ask(admin);
    expect(before.revenue_by_location.source).toEqual({ kind: "base" });

    // The publish sent the job to start two seconds later (and the embedded engine, one connection, sends it after the publish's transaction).
    let ran = 0;
    for (const deadline = Date.now() + 150_000; ran === 0 && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      ran = await drainRollupQueue();
    }
    expect(ran).toBeGreaterThan(0);
    const built = await withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRaw<{ state: string }[]>`SELECT DISTINCT state FROM rollups`);
    expect(built).toEqual([{ state: "ready" }]);

    const after = await ask(admin);
    expect(after.revenue_by_location.source).toEqual({ kind: "rollup", name: "sales_by_location_day" });
    expect(after.channel_mix.source).toEqual({ kind: "rollup", name: "sales_by_channel_category_day" });
    expect(after.revenue_kpi.source).toEqual({ kind: "rollup", name: "orders_by_day" });
    expect(after.order_grid.source).toEqual({ kind: "base" });
    expect(after.notes?.source).toBeUndefined();
    expect(rowsOf(after)).toEqual(rowsOf(before));
  }, 240_000);

  it("a location-scoped manager gets from the rollups exactly what the tables give them", async () => {
    const scoped = await ask(gm);
    expect(scoped.revenue_by_location.source).toEqual({ kind: "rollup", name: "sales_by_location_day" });
    expect(scoped.revenue_by_location.rows.length).toBe(3);
    // A write moves the warehouse past the rollups: the tables answer until they are refreshed, with the same rows.
    await withTenant({ orgId: "org_acme" }, (tx) => tx.$executeRaw`UPDATE orders SET quantity = quantity WHERE id = (SELECT min(id) FROM orders)`);
    const stale = await ask(gm);
    expect(stale.revenue_by_location.source).toEqual({ kind: "base" });
    expect(rowsOf(stale)).toEqual(rowsOf(scoped));
  }, 120_000);

  it("another organization cannot query the dashboard, and reads none of its rollups", async () => {
    const globex = await tokenFor("globex", "admin");
    const res = await call(query.POST, "POST", { token: globex, params: { id: dashboardId }, body: {} });
    expect(res.status).toBe(404);
    const rows = await withTenant({ orgId: "org_globex" }, (tx) => tx.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM rollups`);
    expect(rows).toEqual([{ n: 0 }]);
  });
});
