import fs from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import * as list from "@/app/api/v1/custom-dashboards/route";
import * as publish from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import * as query from "@/app/api/v1/custom-dashboards/[id]/query/route";
import { getDb } from "@/lib/db/client";
import { call, tokenFor } from "@/test/helpers";

// period: a date filter defaulting to "last month" (every widget); channel: a select defaulting to "store" (revenue_kpi).
const YAML = fs.readFileSync(path.join(import.meta.dirname, "../../../../../../lib/dashboards/fixtures/filter-states.yaml"), "utf8");
let admin: string;
let analyst: string;
let dashboardId: string;

beforeAll(async () => {
  [admin, analyst] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst")]);
  const created = await call(list.POST, "POST", "/api/v1/custom-dashboards", { token: admin, body: { name: "Filter states", slug: "filter-states", spec_yaml: YAML } });
  expect(created.status).toBe(201);
  dashboardId = created.json.id;
  expect((await call(publish.POST, "POST", { token: admin, params: { id: dashboardId } })).status).toBe(200);
});

/** acme's revenue by SQL written by hand; acme's time zone is America/New_York. */
async function revenue(where: string): Promise<number> {
  const { system } = await getDb();
  const [row] = await system.query<{ v: string | number }>(`SELECT coalesce(sum(amount), 0) AS v FROM orders WHERE org_id = 'org_acme' AND ${where}`);
  return Number(row.v);
}
const today = "(now() AT TIME ZONE 'America/New_York')::date";
const LAST_MONTH = `order_date >= date_trunc('month', ${today} - interval '1 month')::date AND order_date < date_trunc('month', ${today})::date`;

async function ask(filters: Record<string, unknown>) {
  const res = await call(query.POST, "POST", { token: analyst, params: { id: dashboardId }, body: { filters, widget_ids: ["revenue_kpi"] } });
  expect(res.status, JSON.stringify(filters)).toBe(200);
  const widget = res.json.widgets.revenue_kpi;
  expect(widget.error, JSON.stringify(filters)).toBeNull();
  return { cached: widget.cached as boolean, revenue: Number(widget.rows[0]?.revenue ?? 0) };
}

describe("POST /api/v1/custom-dashboards/{id}/query: cleared and default filters through the result cache", () => {
  it("answers a cleared filter, the default, and the cleared filter again, each with its own figures", async () => {
    const allTime = await revenue("TRUE");
    const lastMonthStore = await revenue(`channel = 'store' AND ${LAST_MONTH}`);
    const allTimeStore = await revenue("channel = 'store'");
    expect(lastMonthStore).toBeGreaterThan(0);
    expect(allTimeStore).toBeGreaterThan(lastMonthStore);

    const cleared = { period: null, channel: null };
    expect(await ask(cleared)).toEqual({ cached: false, revenue: expect.closeTo(allTime, 2) });
    // The defaults: last month, store. This was answered from the cleared entry before.
    expect(await ask({})).toEqual({ cached: false, revenue: expect.closeTo(lastMonthStore, 2) });
    expect(await ask(cleared)).toEqual({ cached: true, revenue: expect.closeTo(allTime, 2) });
    expect(await ask({})).toEqual({ cached: true, revenue: expect.closeTo(lastMonthStore, 2) });
    // One filter cleared, the other left at its default.
    expect(await ask({ period: null })).toEqual({ cached: false, revenue: expect.closeTo(allTimeStore, 2) });
    expect(await ask({ period: null })).toEqual({ cached: true, revenue: expect.closeTo(allTimeStore, 2) });
    // The defaults spelled out are the defaults: the same entry.
    expect(await ask({ period: "last month", channel: "store" })).toEqual({ cached: true, revenue: expect.closeTo(lastMonthStore, 2) });
    // An empty text clears as null does.
    expect(await ask({ period: "", channel: null })).toEqual({ cached: true, revenue: expect.closeTo(allTime, 2) });
  });

  it("gives every pair of filter states its own right answer, whichever is asked first", async () => {
    const states: [Record<string, unknown>, string][] = [
      [{ period: "2026-03-01 to 2026-03-31" }, "channel = 'store' AND order_date >= '2026-03-01' AND order_date < '2026-04-01'"],
      [{ period: "2026-03-01 to 2026-03-31", channel: null }, "order_date >= '2026-03-01' AND order_date < '2026-04-01'"],
      [{ period: "2026-03-01 to 2026-03-31", channel: "online" }, "channel = 'online' AND order_date >= '2026-03-01' AND order_date < '2026-04-01'"],
      [{ channel: "online" }, `channel = 'online' AND ${LAST_MONTH}`],
      [{ period: null, channel: "online" }, "channel = 'online'"],
      [{ period: "yesterday", channel: null }, `order_date = ${today} - 1`],
    ];
    const expected = await Promise.all(states.map(([, where]) => revenue(where)));
    // Twice through in one order, then once in the reverse order: every answer is its own.
    for (const order of [states.keys(), states.keys(), [...states.keys()].reverse()]) {
      for (const i of order) expect((await ask(states[i][0])).revenue, JSON.stringify(states[i][0])).toBeCloseTo(expected[i], 2);
    }
  });

  it("refuses an unusable value in that widget only, and caches no failure", async () => {
    for (let i = 0; i < 2; i++) {
      const res = await call(query.POST, "POST", { token: analyst, params: { id: dashboardId }, body: { filters: { period: "next fortnight" }, widget_ids: ["revenue_kpi"] } });
      expect(res.status).toBe(200);
      expect(res.json.widgets.revenue_kpi).toMatchObject({ cached: false, rows: [], error: { detail: expect.stringMatching(/next fortnight/) } });
    }
  });
});
