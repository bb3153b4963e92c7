import { beforeAll, describe, expect, it } from "vitest";
import * as planRoute from "@/app/api/v1/custom-dashboards/%5Fplan/route";
import * as applyRoute from "@/app/api/v1/custom-dashboards/%5Fapply/route";
import * as query from "@/app/api/v1/custom-dashboards/[id]/query/route";
import * as embed from "@/app/api/v1/custom-dashboards/[id]/embed/route";
import * as metrics from "@/app/api/v1/metrics/route";
import * as certification from "@/app/api/v1/metrics/[dataset]/[metric]/certification/route";
import * as series from "@/app/api/v1/metrics/[dataset]/[metric]/series/route";
import { withTenant } from "@/lib/db/tenant";
import type { DatasetPlanItem, ImpactReader } from "@/lib/datasets/contract";
import { call, tokenFor } from "@/test/helpers";

/*
 * Shared datasets end to end on the real database (issue 48 §1-3): pushed and planned with dashboards through the
 * same _plan/_apply, resolved for every reader, their impact listed against hand-built readers (widgets, an embed, a
 * report schedule, an alert) with values run before and after, renames refused unless an alias carries them, and
 * the catalog's certification dropped when a definition changes. Another organization sees none of it.
 */

const dataset = (metrics: string, extra = "") => `version: "1.0"
kind: dataset
metadata: { id: shop_sales, name: Shop sales, owner: finance@acme.test }
spec:
  from: orders
  dimensions:
    - { id: channel, column: orders.channel }
    - { id: order_date, column: orders.order_date }
  metrics:
${metrics}
${extra}`;

const REVENUE = `    - { id: revenue, type: sql, expression: sum(orders.amount), label: Revenue }
    - { id: orders_count, type: sql, expression: count(*) }`;

const DASHBOARD = `version: "1.0"
kind: dashboard
metadata: { id: shared-shop, name: Shared shop }
platform: { allow_embed: true }
spec:
  datasets:
    - { ref: shop_sales }
  tabs:
    - { id: main, name: Main, widgets: [channel_filter, revenue_kpi, by_channel, count_kpi] }
---
version: "1.0"
kind: widget
metadata: { id: channel_filter, name: Channel }
spec:
  component: filter
  layout: { x: 0, y: 0, w: 3, h: 2 }
  display: { filter: { control: select, options: [online, store] } }
  bindings:
    - { target: "*", field: channel, operator: eq }
---
version: "1.0"
kind: widget
metadata: { id: revenue_kpi, name: Revenue }
spec:
  component: kpi
  layout: { x: 0, y: 2, w: 3, h: 2 }
  data: { kind: dataset, dataset: shop_sales, columns: [revenue], mappings: { value: revenue } }
  display: { kpi: { format: number } }
---
version: "1.0"
kind: widget
metadata: { id: by_channel, name: By channel }
spec:
  component: table
  layout: { x: 3, y: 2, w: 6, h: 4 }
  data: { kind: dataset, dataset: shop_sales, columns: [channel, revenue] }
---
version: "1.0"
kind: widget
metadata: { id: count_kpi, name: Orders }
spec:
  component: kpi
  layout: { x: 9, y: 2, w: 3, h: 2 }
  data: { kind: dataset, dataset: shop_sales, columns: [orders_count], mappings: { value: orders_count } }
  display: { kpi: { format: number } }
`;

type File = { path: string; content: string };
let admin: string, analyst: string, globex: string;
let dashboardId: string;

const plan = (files: File[], token = admin) => call(planRoute.POST, "POST", { token, body: { files } });
async function push(files: File[], token = admin) {
  const planned = await plan(files, token);
  expect(planned.status, planned.text).toBe(200);
  return call(applyRoute.POST, "POST", { token, body: { files, expected: planned.json.expected, expected_datasets: planned.json.expected_datasets, publish: true } });
}
const datasetFile = (content: string): File => ({ path: "dashboards/shop_sales.yaml", content });
const dashboardFile: File = { path: "dashboards/shared-shop.yaml", content: DASHBOARD };
const readersOf = (item: DatasetPlanItem, kind: ImpactReader["kind"]) => item.readers.filter((r) => r.kind === kind).map((r) => `${r.dashboard}/${r.widget}`).sort();

async function widgetValues(token = admin) {
  const res = await call(query.POST, "POST", { token, params: { id: dashboardId }, body: { refresh: true } });
  expect(res.status, res.text).toBe(200);
  return Object.fromEntries(Object.entries(res.json.widgets as Record<string, { rows: unknown[]; error: unknown }>).map(([id, w]) => [id, w.error ?? w.rows]));
}

beforeAll(async () => {
  [admin, analyst, globex] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst"), tokenFor("globex", "admin")]);
  const pushed = await push([datasetFile(dataset(REVENUE)), dashboardFile]);
  expect(pushed.status, pushed.text).toBe(200);
  expect(pushed.json.datasets).toEqual([{ id: "shop_sales", action: "create", version: 1 }]);
  dashboardId = pushed.json.items.find((i: { slug: string }) => i.slug === "shared-shop").dashboard_id;
  // Hand-built readers beside the widgets: an embed with a locked channel, a report schedule and an alert with filters.
  const made = await call(embed.POST, "POST", { token: admin, params: { id: dashboardId }, body: { locked_filters: { channel_filter: "online" }, allowed_origins: ["https://partner.example"] } });
  expect(made.status, made.text).toBeLessThan(300);
  await withTenant({ orgId: "org_acme" }, async (tx) => {
    await tx.reportSchedule.create({
      data: { id: "rsc_shared_shop", orgId: "org_acme", dashboardId, name: "Weekly shop", cron: "0 8 * * 1", timeZone: "UTC", formats: ["pdf"], filters: { channel_filter: "store" }, channels: ["email"], sharedRole: "admin", createdBy: "usr_acme_admin", updatedBy: "usr_acme_admin" },
    });
    await tx.widgetAlert.create({
      data: { id: "wal_shared_shop", orgId: "org_acme", dashboardId, name: "Revenue drop", widgetId: "revenue_kpi", definition: { filters: { channel_filter: "online" } }, cadenceKind: "cron", cron: "0 * * * *", ownerId: "usr_acme_admin", sharedRole: "admin" },
    });
  });
});

describe("shared datasets", () => {
  it("a dashboard reads a shared dataset by ref; pulling both back plans no change", async () => {
    const values = await widgetValues();
    expect(values.revenue_kpi).toHaveLength(1);
    expect(Number((values.revenue_kpi as { revenue: unknown }[])[0].revenue)).toBeGreaterThan(0);
    const again = await plan([datasetFile(dataset(REVENUE)), dashboardFile]);
    expect(again.json).toMatchObject({ valid: true, changes: false });
    expect(again.json.datasets[0]).toMatchObject({ id: "shop_sales", action: "unchanged", base: 1, readers: [] });
  });

  it("a ref to no shared dataset is an error at its line", async () => {
    const res = await plan([{ path: "dashboards/broken.yaml", content: DASHBOARD.replace("{ ref: shop_sales }", "{ ref: nowhere }") }]);
    const item = res.json.items.find((i: { slug: string }) => i.slug === "broken");
    expect(item.action).toBe("invalid");
    expect(item.errors[0]).toMatchObject({ line: 7, path: "spec.datasets[0].ref" });
    expect(item.errors[0].message).toContain("no shared dataset has id 'nowhere'");
  });

  it("impact: every reader of a changed metric with its values before and after, and none of the unchanged one", async () => {
    const doubled = REVENUE.replace("sum(orders.amount)", "sum(orders.amount) * 2");
    const res = await plan([datasetFile(dataset(doubled))]);
    expect(res.status, res.text).toBe(200);
    const item: DatasetPlanItem = res.json.datasets[0];
    expect(item).toMatchObject({ action: "update", base: 1, errors: [] });
    expect(item.changes).toEqual([{ column: "revenue", kind: "metric", change: "changed", successor: null }]);
    expect(readersOf(item, "widget")).toEqual(["shared-shop/by_channel", "shared-shop/revenue_kpi"]);
    expect(readersOf(item, "embed")).toEqual(["shared-shop/by_channel", "shared-shop/revenue_kpi"]);
    expect(readersOf(item, "report_schedule")).toEqual(["shared-shop/by_channel", "shared-shop/revenue_kpi"]);
    expect(readersOf(item, "alert")).toEqual(["shared-shop/revenue_kpi"]);
    for (const reader of item.readers) {
      expect(reader.changed, JSON.stringify(reader)).toBe(true);
      expect(reader.before?.error).toBeNull();
      const before = reader.before!.rows.map((r) => Number(r.revenue));
      const after = reader.after!.rows.map((r) => Number(r.revenue));
      expect(after).toEqual(before.map((v) => v * 2));
    }
    // Each reader runs with its own filters: the embed's locked channel, the schedule's, the alert's.
    const embedKpi = item.readers.find((r) => r.kind === "embed" && r.widget === "revenue_kpi")!;
    const scheduleKpi = item.readers.find((r) => r.kind === "report_schedule" && r.widget === "revenue_kpi")!;
    const byChannel = item.readers.find((r) => r.kind === "widget" && r.widget === "by_channel")!;
    const perChannel = Object.fromEntries(byChannel.before!.rows.map((r) => [r.channel, Number(r.revenue)]));
    expect(embedKpi.filters).toEqual({ channel_filter: "online" });
    expect(scheduleKpi.filters).toEqual({ channel_filter: "store" });
    expect(Number(embedKpi.before!.rows[0].revenue)).toBeCloseTo(perChannel.online, 2);
    expect(Number(scheduleKpi.before!.rows[0].revenue)).toBeCloseTo(perChannel.store, 2);
  });

  it("removing or renaming a metric still read is refused; an alias keeps every dashboard equal", async () => {
    const before = await widgetValues();
    const renamed = REVENUE.replace("id: revenue,", "id: net_revenue,");
    const refused = await plan([datasetFile(dataset(renamed))]);
    expect(refused.json.valid).toBe(false);
    const errors: DatasetPlanItem["errors"] = refused.json.datasets[0].errors;
    expect(errors.map((e) => e.message).join("\n")).toMatch(/dashboard 'shared-shop' \(published version 1\) would break: .*revenue/);
    expect((await push([datasetFile(dataset(renamed))])).status).toBe(422);

    const aliased = REVENUE.replace("id: revenue,", "id: net_revenue, aliases: [revenue],");
    const res = await plan([datasetFile(dataset(aliased))]);
    expect(res.json.valid, res.text).toBe(true);
    const item: DatasetPlanItem = res.json.datasets[0];
    expect(item.changes).toEqual([
      { column: "net_revenue", kind: "metric", change: "added", successor: null },
      { column: "revenue", kind: "metric", change: "renamed", successor: "net_revenue" },
    ]);
    expect(item.readers.length).toBeGreaterThan(0);
    expect(item.readers.every((r) => !r.changed)).toBe(true);
    const pushed = await push([datasetFile(dataset(aliased))]);
    expect(pushed.status, pushed.text).toBe(200);
    expect(await widgetValues()).toEqual(before);
    // Back to the plain definition for the tests after this one.
    expect((await push([datasetFile(dataset(REVENUE))])).status).toBe(200);
  });

  it("apply is refused when the dataset changed since the plan", async () => {
    const files = [datasetFile(dataset(REVENUE.replace("label: Revenue", "label: Sales")))];
    const planned = await plan(files);
    expect((await push([datasetFile(dataset(REVENUE.replace("label: Revenue", "label: Turnover")))])).status).toBe(200);
    const res = await call(applyRoute.POST, "POST", { token: admin, body: { files, expected: planned.json.expected, expected_datasets: planned.json.expected_datasets } });
    expect(res.status).toBe(409);
    expect(JSON.stringify(res.json.detail)).toContain("dataset shop_sales");
  });
});

describe("metrics catalog", () => {
  const revenueOf = async (token = admin) => {
    const res = await call(metrics.GET, "GET", "/api/v1/metrics?limit=200", { token });
    expect(res.status, res.text).toBe(200);
    return res.json.items.find((m: { dataset: string; id: string }) => m.dataset === "shop_sales" && m.id === "revenue");
  };
  const certify = (method: "PUT" | "DELETE", token = admin) =>
    call(method === "PUT" ? certification.PUT : certification.DELETE, method, { token, params: { dataset: "shop_sales", metric: "revenue" } });

  it("lists each metric with its definition, owner and the widgets that read it", async () => {
    const revenue = await revenueOf(analyst);
    expect(revenue).toMatchObject({ type: "sql", expression: "sum(orders.amount)", owner: "finance@acme.test", source: "orders", certification: null });
    // Once per widget: published when the published version reads it.
    expect(revenue.used_by.map((u: { dashboard: string; widget: string; published: boolean }) => `${u.dashboard}/${u.widget}:${u.published}`).sort()).toEqual(["shared-shop/by_channel:true", "shared-shop/revenue_kpi:true"]);
  });

  it("an admin certifies; an analyst may not; a changed definition loses the mark, a changed label keeps it", async () => {
    expect((await certify("PUT", analyst)).status).toBe(403);
    const certified = await certify("PUT");
    expect(certified.status, certified.text).toBe(200);
    expect(certified.json.certification).toMatchObject({ by: "usr_acme_admin" });
    expect((await push([datasetFile(dataset(REVENUE.replace("label: Revenue", "label: Net sales")))])).status).toBe(200);
    expect((await revenueOf()).certification).not.toBeNull();
    expect((await push([datasetFile(dataset(REVENUE.replace("sum(orders.amount)", "sum(orders.amount - orders.cost)")))])).status).toBe(200);
    expect((await revenueOf()).certification).toBeNull();
    expect(await withTenant({ orgId: "org_acme" }, (tx) => tx.metricCertification.count({ where: { metricId: "revenue" } }))).toBe(0);
    expect((await push([datasetFile(dataset(REVENUE))])).status).toBe(200);
    expect((await certify("PUT")).status).toBe(200);
    expect((await certify("DELETE")).json.certification).toBeNull();
  });

  it("draws a small chart of the metric through the query engine", async () => {
    const res = await call(series.GET, "GET", { token: analyst, params: { dataset: "shop_sales", metric: "revenue" } });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ dimension: "channel", error: null });
    expect(res.json.points.length).toBeGreaterThan(0);
    const widget = (await widgetValues()).by_channel as { channel: string; revenue: unknown }[];
    expect(Object.fromEntries(res.json.points.map((p: { label: string; value: number }) => [p.label, p.value]))).toEqual(Object.fromEntries(widget.map((r) => [r.channel, Number(r.revenue)])));
  });

  it("another organization sees nothing of it on any route", async () => {
    const listed = await call(metrics.GET, "GET", "/api/v1/metrics?limit=200", { token: globex });
    expect(listed.status).toBe(200);
    expect(listed.json.items.filter((m: { dataset: string }) => m.dataset === "shop_sales")).toEqual([]);
    expect((await call(series.GET, "GET", { token: globex, params: { dataset: "shop_sales", metric: "revenue" } })).status).toBe(404);
    expect((await call(certification.PUT, "PUT", { token: globex, params: { dataset: "shop_sales", metric: "revenue" } })).status).toBe(404);
    expect((await call(certification.DELETE, "DELETE", { token: globex, params: { dataset: "shop_sales", metric: "revenue" } })).status).toBe(404);
    const globexPlan = await plan([dashboardFile], globex);
    const item = globexPlan.json.items.find((i: { slug: string }) => i.slug === "shared-shop");
    expect(item.action).toBe("invalid");
    expect(item.errors[0].message).toContain("no shared dataset has id 'shop_sales'");
  });
});
