import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it, vi } from "vitest";
import * as list from "@/app/api/v1/custom-dashboards/route";
import * as query from "@/app/api/v1/custom-dashboards/[id]/query/route";
import type { Principal } from "@/lib/access/roles";
import { call, tokenFor } from "@/test/helpers";
import { queryDashboard } from "./query";

// The real engine, counted: how many widget queries a request actually runs.
const runs = vi.hoisted(() => ({ count: 0 }));
vi.mock("@/lib/query/run", async (importOriginal) => {
  const original = await importOriginal<typeof import("@/lib/query/run")>();
  return {
    ...original,
    runWidgetQuery: (...args: Parameters<typeof original.runWidgetQuery>) => {
      runs.count++;
      return original.runWidgetQuery(...args);
    },
  };
});

const SMALL = fs.readFileSync(path.join(import.meta.dirname, "fixtures/small-dashboard.yaml"), "utf8");
const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "bearer" };
let token: string;
let dashboardId: string;

beforeAll(async () => {
  token = await tokenFor("acme", "admin");
  const created = await call(list.POST, "POST", "/api/v1/custom-dashboards", { token, body: { name: "Budget", slug: "budget", spec_yaml: SMALL } });
  dashboardId = created.json.id;
});

const ask = (body: object) => call(query.POST, "POST", `/api/v1/custom-dashboards/${dashboardId}/query`, { token, params: { id: dashboardId }, body: { version: "draft", ...body } });

describe("the per-request budget of the dashboard query", () => {
  it("computes 50 copies of one widget, refreshed, once", async () => {
    runs.count = 0;
    const res = await ask({ widget_ids: Array(50).fill("by_channel"), refresh: true });
    expect(res.status).toBe(200);
    expect(runs.count).toBe(1);
    expect(Object.keys(res.json.widgets)).toEqual(["by_channel"]);
    expect(res.json.widgets.by_channel).toMatchObject({ error: null, cached: false, truncated: false });
  });

  it("refuses more distinct widgets than the budget with 422, before running any", async () => {
    runs.count = 0;
    const ids = Array.from({ length: 101 }, (_, i) => `w${i}`);
    const res = await ask({ widget_ids: ids });
    expect(res.status).toBe(422);
    expect(res.json.detail).toMatch(/at most 100 widgets; this one asks for 101/);
    expect(runs.count).toBe(0);
  });

  it("fails a request past its row budget with 503 and caches none of it", async () => {
    const filters = { period: "2026-01-01 to 2026-01-31" };
    await expect(queryDashboard(admin, dashboardId, { filters, widget_ids: ["revenue_kpi", "by_channel"], version: "draft" }, { maxWidgets: 10, maxRows: 2, maxMs: 30_000 })).rejects.toMatchObject({
      kind: "unavailable",
      detail: expect.stringMatching(/returned more than 2 rows after 2 of 2 widgets and was stopped; nothing was cached/),
    });
    // revenue_kpi (one row) was computed within the budget, but the request failed, so it was not cached.
    runs.count = 0;
    const again = await queryDashboard(admin, dashboardId, { filters, widget_ids: ["revenue_kpi"], version: "draft" });
    expect(again.widgets.revenue_kpi.cached).toBe(false);
    expect(runs.count).toBe(1);
    // A request within its budget is cached as before.
    expect((await queryDashboard(admin, dashboardId, { filters, widget_ids: ["revenue_kpi"], version: "draft" })).widgets.revenue_kpi.cached).toBe(true);
  });

  it("fails a request past its time budget with 503 and caches none of it", async () => {
    const filters = { period: "2026-02-01 to 2026-02-28" };
    runs.count = 0;
    await expect(queryDashboard(admin, dashboardId, { filters, widget_ids: ["revenue_kpi", "by_channel"], version: "draft" }, { maxWidgets: 10, maxRows: 1_000, maxMs: 1 })).rejects.toMatchObject({
      kind: "unavailable",
      detail: expect.stringMatching(/ran past its time budget of 1 ms after 1 of 2 widgets/),
    });
    expect(runs.count).toBe(1);
    const again = await queryDashboard(admin, dashboardId, { filters, widget_ids: ["revenue_kpi", "by_channel"], version: "draft" });
    expect(again.widgets.revenue_kpi.cached).toBe(false);
  });
});
