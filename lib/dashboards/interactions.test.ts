import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import * as list from "@/app/api/v1/custom-dashboards/route";
import * as one from "@/app/api/v1/custom-dashboards/[id]/route";
import * as publish from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import * as embed from "@/app/api/v1/custom-dashboards/[id]/embed/route";
import { principalFromBearer } from "@/lib/auth/bearer";
import { call, tokenFor } from "@/test/helpers";
import { loadEmbed } from "./embed-page";
import { loadDashboard } from "./page-data";

const SMALL = fs.readFileSync(path.join(import.meta.dirname, "fixtures/small-dashboard.yaml"), "utf8");
/** The small dashboard with a chart whose click drills through as given (its data: order_date, channel, revenue). */
const withDrill = (drill: string) =>
  `${SMALL.replace("widgets: [location, period, revenue_kpi, by_channel, note]", "widgets: [location, period, revenue_kpi, by_channel, note, trend]")}
---
version: "1.0"
kind: widget
metadata: { id: trend, name: Trend }
spec:
  component: echarts
  layout: { x: 0, y: 8, w: 12, h: 4 }
  data: { kind: dataset, dataset: sales, columns: [order_date, channel, revenue], mappings: { x: order_date, y: revenue } }
  display: { echarts: { option: { series: [{ type: line }] } } }
  on_click:
    drill_through: ${drill}
`;

let admin: string, analyst: string, globex: string;

async function create(slug: string, spec_yaml: string, token = admin) {
  return call(list.POST, "POST", "/api/v1/custom-dashboards", { token, body: { name: slug, slug, spec_yaml } });
}

beforeAll(async () => {
  [admin, analyst, globex] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst"), tokenFor("globex", "admin")]);
  // Two drill targets: one every role sees, one for admins only.
  expect((await create("daily", SMALL)).status).toBe(201);
  expect((await call(publish.POST, "POST", { token: admin, params: { id: "daily" } })).status).toBe(200);
  expect((await create("admins-only", SMALL.replace("roles: [admin, general_manager, analyst]", "roles: [admin]"))).status).toBe(201);
  expect((await call(publish.POST, "POST", { token: admin, params: { id: "admins-only" } })).status).toBe(200);
});

describe("drill-through targets at save", () => {
  it("accepts a target dashboard of the organization whose filter takes the clicked column", async () => {
    expect((await create("drills-ok", withDrill("{ dashboard: daily, tab: main, filters: [{ filter: period, field: order_date }] }"))).status).toBe(201);
  });

  it("reports a missing dashboard, tab or filter, and a column the filter cannot take, with line and column", async () => {
    const missing = await create("drills-missing", withDrill("{ dashboard: nowhere }"));
    expect(missing.status).toBe(422);
    expect(missing.json.detail).toEqual([expect.objectContaining({ msg: expect.stringMatching(/^\d+:\d+ no dashboard has slug 'nowhere' in this organization$/), line: expect.any(Number), column: expect.any(Number) })]);
    const wrong = await create("drills-wrong", withDrill("{ dashboard: daily, tab: other, filters: [{ filter: period, field: revenue }, { filter: nope, field: channel }] }"));
    expect(wrong.status).toBe(422);
    expect(wrong.json.detail.map((d: { msg: string }) => d.msg.replace(/^\d+:\d+ /, ""))).toEqual([
      "the target dashboard has no tab 'other'; its tabs: main",
      "'revenue' cannot set filter 'period': it is a number and filter 'Period' takes date expressions",
      "dashboard 'daily' has no filter widget 'nope'",
    ]);
  });

  it("checks an update too, under the dashboard's slug (a drill to itself stays on the page)", async () => {
    const self = await create("drills-self", withDrill("{ dashboard: drills-self, filters: [{ filter: period, field: order_date }] }"));
    expect(self.status).toBe(201);
    const res = await call(one.PUT, "PUT", { token: admin, params: { id: "drills-self" }, body: { spec_yaml: withDrill("{ dashboard: gone }") } });
    expect(res.status).toBe(422);
    expect(res.json.detail[0].msg).toContain("no dashboard has slug 'gone'");
  });

  it("another organization's dashboards do not exist for it", async () => {
    const res = await create("drills-globex", withDrill("{ dashboard: daily }"), globex);
    expect(res.status).toBe(422);
    expect(res.json.detail[0].msg).toContain("no dashboard has slug 'daily' in this organization");
  });
});

describe("what a page lets a click open", () => {
  it("a viewer gets only the targets it may open; an embed only its own dashboard", async () => {
    const spec = withDrill("{ dashboard: admins-only, filters: [{ filter: period, field: order_date }] }");
    expect((await create("drills-pages", spec)).status).toBe(201);
    expect((await call(publish.POST, "POST", { token: admin, params: { id: "drills-pages" } })).status).toBe(200);

    const asAdmin = await loadDashboard(await principalFromBearer(admin), "drills-pages", {});
    const asAnalyst = await loadDashboard(await principalFromBearer(analyst), "drills-pages", {});
    if (!asAdmin?.ok || !asAnalyst?.ok) throw new Error("both may open the page");
    expect(asAdmin.clicks.drills["admins-only"]).toEqual({ tabs: ["main"], filters: expect.objectContaining({ period: expect.objectContaining({ date: true }) }) });
    expect(asAnalyst.clicks.drills["admins-only"]).toBeNull();
    expect(asAdmin.clicks.fieldTypes.trend).toEqual({ order_date: { kind: "date", bucket: "day" }, channel: null, revenue: { kind: "number" } });

    const made = await call(embed.POST, "POST", { token: admin, params: { id: "drills-pages" }, body: { allowed_origins: ["https://partner.example"] } });
    expect(made.status).toBe(201);
    const page = await loadEmbed(made.json.token, {});
    if (!page.ok) throw new Error(page.reason);
    expect(page.clicks.drills["admins-only"]).toBeNull();
    expect(page.session).toEqual({ embedId: made.json.embed_id, dashboardId: made.json.dashboard_id, version: 1, expiresAt: made.json.expires_at, allowedOrigins: ["https://partner.example"], downloads: { pdf: false, png: false } });
  });
});
