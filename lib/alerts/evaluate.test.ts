import { beforeAll, describe, expect, it } from "vitest";
import { createDashboard, publishDashboard } from "@/lib/dashboards/dashboards";
import { getDb } from "@/lib/db/client";
import { withTenant } from "@/lib/db/tenant";
import { ALERT_TEST_MANIFEST, EAST, WEST, addManagers, lastOfMonth, monthBeforeLastOrder, nextMonth, ordersBetween, previousMonth, principalOf } from "@/test/support/widget-alerts";
import { createAlert, updateAlert } from "./alerts";
import type { CreateAlertInput } from "./contract";
import { CreateAlertBody } from "./contract";
import { evaluateAlerts, type AlertDelivery } from "./evaluate";
import { claimAlertMessage, recordEvaluation } from "./state";

const admin = principalOf("usr_acme_admin", "admin", null);
let dashboardId = "";
/** A month with orders before and after it, and the one before it (`YYYY-MM-01`). */
let month = "";
let before = "";
let range = "";

/** Messages delivered, as the delivery step would claim them (once each). */
const delivered: { id: string; kind: string; scopeKey: string; dimensionValue: string; recipients: string[] }[] = [];
const deliver: AlertDelivery = async (orgId, ids) => {
  for (const id of ids) {
    const message = await withTenant({ orgId }, (tx) => claimAlertMessage(tx, id, new Date()));
    if (message) delivered.push({ id, kind: message.kind, scopeKey: message.scopeKey, dimensionValue: message.dimensionValue, recipients: (message.targets as { recipient: string }[]).map((t) => t.recipient).sort() });
  }
};

/** An alert on the test dashboard, evaluated when the data changes unless said. */
const alert = (input: Omit<CreateAlertInput, "dashboard_id" | "cadence"> & Partial<Pick<CreateAlertInput, "cadence">>) =>
  createAlert(admin, CreateAlertBody.parse({ dashboard_id: dashboardId, cadence: { kind: "on_data_change" }, ...input }), new Date());
const evaluationsOf = (alertId: string) => withTenant(admin, (tx) => tx.widgetAlertEvaluation.findMany({ where: { alertId }, orderBy: [{ evaluatedAt: "asc" }, { scopeKey: "asc" }, { dimensionValue: "asc" }] }));
const messagesOf = (alertId: string) => withTenant(admin, (tx) => tx.widgetAlertMessage.findMany({ where: { alertId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] }));
const setTimeZone = async (zone: string) => (await getDb()).system.query("UPDATE organizations SET time_zone = $1 WHERE id = 'org_acme'", [zone]);

beforeAll(async () => {
  await addManagers([
    ["usr_acme_gm_east", "gm-east@acme.test", EAST],
    ["usr_acme_gm_west", "gm-west@acme.test", WEST],
  ]);
  const created = await createDashboard(admin, { name: "Alerted sales", slug: "alerted-sales", spec_yaml: ALERT_TEST_MANIFEST });
  dashboardId = created.id;
  await publishDashboard(admin, dashboardId);
  month = await monthBeforeLastOrder(2);
  before = previousMonth(month);
  range = `${month} to ${lastOfMonth(month)}`;
}, 120_000);

describe("each condition against figures computed by hand", () => {
  it("above, below, outside, no data and a month-over-month change, sharing one query per filters and scope", async () => {
    const total = await ordersBetween(month, nextMonth(month));
    const previous = await ordersBetween(before, month);
    expect(total).toBeGreaterThan(0);
    expect(previous).toBeGreaterThan(0);
    const filters = { date: range };
    const above = await alert({ name: "above", widget_id: "orders_total", filters, condition: { kind: "above", threshold: total - 1 } });
    const below = await alert({ name: "below", widget_id: "orders_total", filters, condition: { kind: "below", threshold: total - 1 } });
    const outside = await alert({ name: "outside", widget_id: "orders_total", filters, condition: { kind: "outside", low: total + 1, high: total + 2 } });
    const change = await alert({ name: "change", widget_id: "orders_total", filters, condition: { kind: "change", against: "month", measure: "percent", direction: "either", amount: 0.0001 } });
    const absolute = await alert({ name: "absolute", widget_id: "orders_total", filters, condition: { kind: "change", against: "month", measure: "absolute", direction: "increase", amount: Math.abs(total - previous) + 1 } });
    const empty = await alert({ name: "no data", widget_id: "by_location", column: "revenue", filters: { date: "2099-01-01 to 2099-01-31" }, condition: { kind: "no_data" } });
    const ids = [above, below, outside, change, absolute, empty].map((a) => a.id);

    const report = await evaluateAlerts("org_acme", ids, { trigger: "data_change", occurrence: "data:conditions", now: new Date(), deliver });
    // The month now, the month before (both change alerts), and the empty range: three queries for six alerts.
    expect(report.queries).toBe(3);
    const byAlert = new Map(report.evaluations.map((e) => [e.alertId, e.measured]));
    expect(byAlert.get(above.id)).toMatchObject({ value: total, threshold: total - 1, outcome: "met", source: "base" });
    expect(byAlert.get(below.id)).toMatchObject({ value: total, outcome: "not_met" });
    expect(byAlert.get(outside.id)).toMatchObject({ value: total, threshold: total + 1, thresholdHigh: total + 2, outcome: "met" });
    expect(byAlert.get(change.id)).toMatchObject({ value: total, previousValue: previous, outcome: "met" });
    expect(byAlert.get(change.id)!.change).toBeCloseTo(((total - previous) / previous) * 100, 9);
    expect(byAlert.get(absolute.id)).toMatchObject({ value: total, previousValue: previous, change: total - previous, outcome: "not_met" });
    expect(byAlert.get(empty.id)).toMatchObject({ value: null, outcome: "met" });

    // Recorded as measured, met told apart from not met.
    const [recorded] = await evaluationsOf(below.id);
    expect({ value: Number(recorded.value), met: recorded.met, outcome: recorded.outcome, state: recorded.state, trigger: recorded.trigger }).toEqual({ value: total, met: false, outcome: "not_met", state: "ok", trigger: "data_change" });
  });

  it("compares the previous month from the organization's time zone: at 05:00 UTC on the 1st it is still the month before in Los Angeles", async () => {
    const after = nextMonth(month);
    const instant = new Date(`${after}T05:00:00Z`);
    const changeAlert = await alert({ name: "mom", widget_id: "orders_total", filters: { date: "this month" }, condition: { kind: "change", against: "month", measure: "absolute", direction: "either", amount: 1 } });
    const [{ zone }] = await (await getDb()).system.query<{ zone: string }>("SELECT time_zone AS zone FROM organizations WHERE id = 'org_acme'");
    try {
      await setTimeZone("America/Los_Angeles");
      const la = await evaluateAlerts("org_acme", [changeAlert.id], { trigger: "test", occurrence: null, now: instant });
      expect(la.evaluations[0].measured).toMatchObject({ value: await ordersBetween(month, after), previousValue: await ordersBetween(before, month) });
      await setTimeZone("UTC");
      const utc = await evaluateAlerts("org_acme", [changeAlert.id], { trigger: "test", occurrence: null, now: instant });
      expect(utc.evaluations[0].measured).toMatchObject({ value: await ordersBetween(after, nextMonth(after)), previousValue: await ordersBetween(month, after) });
    } finally {
      await setTimeZone(zone);
    }
    // A test records its evaluations and moves no state.
    expect((await evaluationsOf(changeAlert.id)).map((e) => e.trigger)).toEqual(["test", "test"]);
    expect(await withTenant(admin, (tx) => tx.widgetAlertState.count({ where: { alertId: changeAlert.id } }))).toBe(0);
  });
});

describe("each recipient in their own scope", () => {
  it("two managers get their own locations' figures, per location, and neither message names the other", async () => {
    const perLocation = await alert({
      name: "per location",
      widget_id: "by_location",
      column: "orders",
      per: "location_id",
      filters: { date: range },
      condition: { kind: "above", threshold: 0 },
      recipients: { me: false, user_ids: ["usr_acme_gm_east", "usr_acme_gm_west"] },
    });
    delivered.length = 0;
    const report = await evaluateAlerts("org_acme", [perLocation.id], { trigger: "cron", occurrence: "cron:scope", now: new Date(), deliver });
    const east = `general_manager:${EAST.join(",")}`;
    const west = `general_manager:${WEST.join(",")}`;
    const seen = report.evaluations.map((e) => [e.scopeKey, e.dimensionValue, e.measured.value]);
    const expected = [];
    for (const [key, locations] of [[east, EAST], [west, WEST]] as const) {
      for (const location of locations) expected.push([key, location, await ordersBetween(month, nextMonth(month), [location])]);
    }
    expect(seen.sort()).toEqual(expected.sort());
    // One message per scope and location, each to that scope's manager only.
    expect(delivered.map((d) => [d.scopeKey, d.dimensionValue, d.recipients]).sort()).toEqual(
      [...EAST.map((l) => [east, l, ["gm-east@acme.test", "usr_acme_gm_east"]]), ...WEST.map((l) => [west, l, ["gm-west@acme.test", "usr_acme_gm_west"]])].sort(),
    );
  });

  it("a recipient removed from the organization is told nothing and nothing is computed in their scope", async () => {
    await addManagers([["usr_acme_gm_gone", "gm-gone@acme.test", ["loc_acme_aus"]]]);
    const watched = await alert({ name: "removed", widget_id: "orders_total", filters: { date: range }, condition: { kind: "above", threshold: 0 }, recipients: { me: false, user_ids: ["usr_acme_gm_east", "usr_acme_gm_gone"] } });
    await (await getDb()).system.query("DELETE FROM users WHERE id = 'usr_acme_gm_gone'");
    delivered.length = 0;
    const report = await evaluateAlerts("org_acme", [watched.id], { trigger: "cron", occurrence: "cron:removed", now: new Date(), deliver });
    expect(report.evaluations.map((e) => e.scopeKey)).toEqual([`general_manager:${EAST.join(",")}`]);
    expect(delivered.flatMap((d) => d.recipients)).toEqual(["gm-east@acme.test", "usr_acme_gm_east"]);
  });
});

describe("state, not spam", () => {
  it("firing, resolved, re-armed: exactly one message each, none while still firing", async () => {
    const total = await ordersBetween(month, nextMonth(month));
    const watched = await alert({ name: "cycle", widget_id: "orders_total", filters: { date: range }, condition: { kind: "above", threshold: total - 1 }, notify_on_resolved: true });
    const run = (occurrence: string) => evaluateAlerts("org_acme", [watched.id], { trigger: "cron", occurrence, now: new Date(), deliver });
    const setThreshold = (threshold: number) => updateAlert(admin, watched.id, { condition: { kind: "above", threshold } }, new Date());
    await run("cron:1");
    await run("cron:2");
    await setThreshold(total + 1);
    await run("cron:3");
    await run("cron:4");
    await setThreshold(total - 1);
    await run("cron:5");
    expect((await evaluationsOf(watched.id)).map((e) => e.state)).toEqual(["firing", "firing", "resolved", "resolved", "firing"]);
    expect((await messagesOf(watched.id)).map((m) => m.kind)).toEqual(["firing", "resolved", "firing"]);
  });

  it("re-notifies after the interval only, and only once never", async () => {
    const t0 = new Date("2030-01-01T00:00:00Z");
    const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000);
    const again = await alert({ name: "again", widget_id: "orders_total", filters: { date: range }, condition: { kind: "above", threshold: 0 }, renotify_minutes: 60 });
    const once = await alert({ name: "once", widget_id: "orders_total", filters: { date: range }, condition: { kind: "above", threshold: 0 }, renotify_minutes: 60, only_once: true });
    for (const minutes of [0, 30, 61, 90, 125]) await evaluateAlerts("org_acme", [again.id, once.id], { trigger: "cron", occurrence: `cron:${minutes}`, now: at(minutes), deliver });
    expect((await messagesOf(again.id)).map((m) => [m.kind, m.createdAt.toISOString()])).toEqual([
      ["firing", at(0).toISOString()],
      ["renotify", at(61).toISOString()],
      ["renotify", at(125).toISOString()],
    ]);
    expect((await messagesOf(once.id)).map((m) => m.kind)).toEqual(["firing"]);
  });

  it("a snoozed alert moves and records its state silently, and tells once the snooze is over if it still fires", async () => {
    const t0 = new Date("2031-01-01T00:00:00Z");
    const snoozed = await alert({ name: "snoozed", widget_id: "orders_total", filters: { date: range }, condition: { kind: "above", threshold: 0 }, snoozed_until: new Date(t0.getTime() + 3_600_000).toISOString() });
    await evaluateAlerts("org_acme", [snoozed.id], { trigger: "cron", occurrence: "cron:a", now: t0, deliver });
    expect((await evaluationsOf(snoozed.id)).map((e) => e.state)).toEqual(["firing"]);
    expect(await messagesOf(snoozed.id)).toEqual([]);
    await evaluateAlerts("org_acme", [snoozed.id], { trigger: "cron", occurrence: "cron:b", now: new Date(t0.getTime() + 2 * 3_600_000), deliver });
    expect((await messagesOf(snoozed.id)).map((m) => m.kind)).toEqual(["firing"]);
  });
});

describe("a worker killed mid-evaluation", () => {
  it("loses nothing and sends nothing twice: a rolled-back evaluation leaves no trace, a retried occurrence records and sends once", async () => {
    const watched = await alert({ name: "killed", widget_id: "orders_total", filters: { date: range }, condition: { kind: "above", threshold: 0 } });
    const now = new Date();
    // Killed inside the transaction, after the state moved and the message was written: all of it rolls back.
    const crash = new Error("worker killed");
    await expect(
      withTenant(admin, async (tx) => {
        await recordEvaluation(tx, {
          orgId: "org_acme",
          alertId: watched.id,
          rules: { notifyOnResolved: false, renotifyMinutes: null, onlyOnce: false, silenced: false },
          trigger: "cron",
          occurrence: "cron:killed",
          now,
          scopeKey: "admin:*",
          dimensionValue: "",
          measured: { value: 1, previousValue: null, change: null, threshold: 0, thresholdHigh: null, outcome: "met", source: "base", rollup: null, error: null },
          targets: [{ channel: "in_app", recipient: "usr_acme_admin", user_id: "usr_acme_admin" }],
        });
        throw crash;
      }),
    ).rejects.toBe(crash);
    expect(await evaluationsOf(watched.id)).toEqual([]);
    expect(await messagesOf(watched.id)).toEqual([]);

    // Killed after the commit, before delivery took the message: the retry of the occurrence records nothing new
    // and hands the message over once.
    const lost: AlertDelivery = async () => {
      throw crash;
    };
    await expect(evaluateAlerts("org_acme", [watched.id], { trigger: "cron", occurrence: "cron:killed", now, deliver: lost })).rejects.toBe(crash);
    delivered.length = 0;
    const retry = await evaluateAlerts("org_acme", [watched.id], { trigger: "cron", occurrence: "cron:killed", now, deliver });
    expect(retry.evaluations.map((e) => e.recorded)).toEqual([null]);
    const third = await evaluateAlerts("org_acme", [watched.id], { trigger: "cron", occurrence: "cron:killed", now, deliver });
    expect(third.messageIds).toEqual([]);
    expect((await evaluationsOf(watched.id)).length).toBe(1);
    expect(delivered.map((d) => d.kind)).toEqual(["firing"]);
    expect((await messagesOf(watched.id)).map((m) => m.dispatchedAt !== null)).toEqual([true]);
  });
});
