import { beforeAll, describe, expect, it } from "vitest";
import * as dashboardsRoute from "@/app/api/v1/custom-dashboards/route";
import * as publishRoute from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import { ENDPOINTS } from "@/lib/api/registry";
import { call, tokenFor } from "@/test/helpers";
import { ALERT_TEST_MANIFEST, lastOfMonth, monthBeforeLastOrder } from "@/test/support/widget-alerts";
import * as one from "./[id]/route";
import * as evaluations from "./[id]/evaluations/route";
import * as mute from "./[id]/mute/route";
import * as snooze from "./[id]/snooze/route";
import * as test from "./[id]/test/route";
import * as alerts from "./route";

/*
 * The alerts API through its route handlers (the endpoint wrapper, real database): who sees what, bad input, and
 * each action's effect as the next read shows it.
 */

let adminToken = "";
let analystToken = "";
let globexToken = "";
let dashboardId = "";
let range = "";

const body = (over: Record<string, unknown> = {}) => ({
  dashboard_id: dashboardId,
  name: "Orders watch",
  widget_id: "orders_total",
  filters: { date: range },
  condition: { kind: "below", threshold: 1 },
  cadence: { kind: "cron", cron: "0 8 * * *" },
  ...over,
});

beforeAll(async () => {
  [adminToken, analystToken, globexToken] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst"), tokenFor("globex", "admin")]);
  const created = await call(dashboardsRoute.POST, "POST", { token: adminToken, body: { name: "Alerted sales", slug: "alerted-sales-api", spec_yaml: ALERT_TEST_MANIFEST } });
  expect(created.status).toBe(201);
  dashboardId = created.json.id;
  expect((await call(publishRoute.POST, "POST", { token: adminToken, params: { id: dashboardId } })).status).toBe(200);
  const month = await monthBeforeLastOrder(2);
  range = `${month} to ${lastOfMonth(month)}`;
}, 120_000);

describe("alerts API", () => {
  it("every alerts route is in the OpenAPI registry", () => {
    const paths = new Set(ENDPOINTS.map((e) => `${e.method.toUpperCase()} ${e.path}`));
    for (const route of ["GET /api/v1/alerts", "POST /api/v1/alerts", "GET /api/v1/alerts/{id}", "PATCH /api/v1/alerts/{id}", "DELETE /api/v1/alerts/{id}", "GET /api/v1/alerts/{id}/evaluations", "POST /api/v1/alerts/{id}/snooze", "POST /api/v1/alerts/{id}/mute", "POST /api/v1/alerts/{id}/test", "GET /api/v1/alert-pictures/{token}"]) {
      expect(paths.has(route), route).toBe(true);
    }
  });

  it("create, read with its history, test now (recorded, nothing moved), snooze, mute, edit and delete", async () => {
    const made = await call(alerts.POST, "POST", { token: adminToken, body: body() });
    expect(made.status).toBe(201);
    const id = made.json.id as string;
    expect(made.json).toMatchObject({ name: "Orders watch", widget_id: "orders_total", muted: false, snoozed_until: null, states: [] });

    const tested = await call(test.POST, "POST", { token: adminToken, params: { id } });
    expect(tested.status).toBe(200);
    expect(tested.json.evaluations.length).toBeGreaterThan(0);
    expect(tested.json.evaluations[0]).toMatchObject({ trigger: "test", outcome: "not_met", met: false, state: "ok" });

    const read = await call(one.GET, "GET", { token: adminToken, params: { id } });
    expect(read.status).toBe(200);
    expect(read.json.evaluations.map((e: { id: string }) => e.id)).toEqual(tested.json.evaluations.map((e: { id: string }) => e.id));
    expect(read.json.states).toEqual([]);
    const history = await call(evaluations.GET, "GET", `/api/v1/alerts/${id}/evaluations?limit=1`, { token: adminToken, params: { id } });
    expect(history.status).toBe(200);
    expect(history.json.total).toBe(tested.json.evaluations.length);
    expect(history.json.items).toHaveLength(1);

    const until = new Date(Date.now() + 3_600_000).toISOString();
    const snoozed = await call(snooze.POST, "POST", { token: adminToken, params: { id }, body: { until } });
    expect(snoozed.status).toBe(200);
    expect(new Date(snoozed.json.snoozed_until).toISOString()).toBe(until);
    expect((await call(snooze.POST, "POST", { token: adminToken, params: { id }, body: { until: null } })).json.snoozed_until).toBeNull();
    expect((await call(mute.POST, "POST", { token: adminToken, params: { id }, body: { muted: true } })).json.muted).toBe(true);

    const edited = await call(one.PATCH, "PATCH", { token: adminToken, params: { id }, body: { condition: { kind: "above", threshold: 5 } } });
    expect(edited.status).toBe(200);
    expect(edited.json).toMatchObject({ condition: { kind: "above", threshold: 5 }, muted: true });

    expect((await call(one.DELETE, "DELETE", { token: adminToken, params: { id } })).status).toBe(204);
    expect((await call(one.GET, "GET", { token: adminToken, params: { id } })).status).toBe(404);
  }, 120_000);

  it("another organization sees nothing: not in its list, 404 for each action", async () => {
    const id = (await call(alerts.POST, "POST", { token: adminToken, body: body({ name: "Acme only" }) })).json.id as string;
    const list = await call(alerts.GET, "GET", { token: globexToken });
    expect(list.status).toBe(200);
    expect(list.json.items.map((a: { id: string }) => a.id)).not.toContain(id);
    for (const [handler, method, extra] of [
      [one.GET, "GET", {}],
      [one.PATCH, "PATCH", { body: { name: "taken" } }],
      [one.DELETE, "DELETE", {}],
      [evaluations.GET, "GET", {}],
      [test.POST, "POST", {}],
      [mute.POST, "POST", { body: { muted: true } }],
      [snooze.POST, "POST", { body: { until: null } }],
    ] as const) {
      const res = await call(handler, method, { token: globexToken, params: { id }, ...extra });
      expect(res.status, `${method} ${handler === one.GET ? "get" : ""}`).toBe(404);
      expect(res.json.detail).toBeTruthy();
    }
    // Still there, unchanged, for its own organization.
    expect((await call(one.GET, "GET", { token: adminToken, params: { id } })).json).toMatchObject({ name: "Acme only", muted: false });
  }, 120_000);

  it("a viewer (analyst) cannot read or change another user's alert; their own they can", async () => {
    const adminsOwn = (await call(alerts.POST, "POST", { token: adminToken, body: body({ name: "The admin's own" }) })).json.id as string;
    const listed = await call(alerts.GET, "GET", { token: analystToken });
    expect(listed.json.items.map((a: { id: string }) => a.id)).not.toContain(adminsOwn);
    expect((await call(one.GET, "GET", { token: analystToken, params: { id: adminsOwn } })).status).toBe(404);
    expect((await call(evaluations.GET, "GET", { token: analystToken, params: { id: adminsOwn } })).status).toBe(404);
    expect((await call(mute.POST, "POST", { token: analystToken, params: { id: adminsOwn }, body: { muted: true } })).status).toBe(404);

    const analystsOwn = await call(alerts.POST, "POST", { token: analystToken, body: body({ name: "The analyst's own" }) });
    expect(analystsOwn.status).toBe(201);
    expect((await call(one.GET, "GET", { token: analystToken, params: { id: analystsOwn.json.id } })).status).toBe(200);
    // An editor whose scope covers it (the admin: every location) does see it.
    expect((await call(one.GET, "GET", { token: adminToken, params: { id: analystsOwn.json.id } })).status).toBe(200);
  }, 120_000);

  it("bad input is 422 with {detail} naming the field, and creates nothing", async () => {
    const count = async () => (await call(alerts.GET, "GET", `/api/v1/alerts?dashboard_id=${dashboardId}&limit=200`, { token: adminToken })).json.total as number;
    const before = await count();
    const cases: [Record<string, unknown>, string][] = [
      [body({ condition: { kind: "above" } }), "condition"],
      [body({ condition: { kind: "outside", low: 5, high: 1 } }), "condition"],
      [body({ condition: { kind: "between", threshold: 1 } }), "condition"],
      [body({ cadence: { kind: "cron", cron: "" } }), "cadence"],
      [body({ name: "" }), "name"],
      [body({ unknown_field: 1 }), "unknown_field"],
      [body({ widget_id: "no_such_widget" }), "widget_id"],
      [body({ filters: { date: "not a date at all" } }), "filters"],
    ];
    for (const [input, field] of cases) {
      const res = await call(alerts.POST, "POST", { token: adminToken, body: input });
      expect(res.status, JSON.stringify(input)).toBe(422);
      expect(Array.isArray(res.json.detail), JSON.stringify(res.json)).toBe(true);
      expect(JSON.stringify(res.json.detail)).toContain(field);
    }
    const snoozeBad = await call(snooze.POST, "POST", { token: adminToken, params: { id: "wal_missing" }, body: { until: "tomorrow" } });
    expect(snoozeBad.status).toBe(422);
    expect(await count()).toBe(before);
  }, 120_000);
});
