import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "@/lib/access/roles";
import { withTenant } from "@/lib/db/tenant";
import { call, tokenFor } from "@/test/helpers";
import * as unsubscribes from "@/app/api/v1/notifications/admin/unsubscribes/route";
import * as unsubscribe from "@/app/api/v1/notifications/admin/unsubscribes/[id]/route";
import * as quietHours from "@/app/api/v1/notifications/admin/quiet-hours/route";
import { putChannelConfig } from "@/lib/notifications/admin/channels";
import { manualClock } from "@/lib/notifications/clock";
import { triggerRule } from "@/lib/notifications/admin/trigger-rule";
import { type Runtime } from "@/lib/notifications/pipeline/runtime";
import { putQuietHours } from "@/lib/notifications/admin/quiet-hours";
import { quietUntil } from "@/lib/notifications/settings/quiet-hours";
import { closeQueue, getQueue } from "@/lib/job-queue";
import { createRule } from "@/lib/notifications/admin/rules";
import { createGroupSubscription } from "@/lib/notifications/admin/group-subscriptions";
import { startSmtp } from "@/test/support/notification-servers";
import { createUnsubscribe } from "@/lib/notifications/admin/unsubscribes";
import { drainQueues } from "@/lib/worker";

process.env.NOTIFICATIONS_CONFIG = JSON.stringify({ url_allow_list: ["127.0.0.1"], in_process_worker: false });

const acme: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "bearer" };
// 05:00 in New York (acme's time zone, EDT).
const START = new Date("2025-06-10T09:00:00Z");
const U = "http://localhost:3000/api/v1/notifications/admin";

const clock = manualClock(START);
let rt: Runtime & { queue: Awaited<ReturnType<typeof getQueue>> };
let smtp: Awaited<ReturnType<typeof startSmtp>>;
let admin: string;
let analyst: string;
let globex: string;

beforeAll(async () => {
  smtp = await startSmtp();
  rt = { clock, queue: await getQueue(false) };
  [admin, analyst, globex] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst"), tokenFor("globex", "admin")]);
  await putChannelConfig(acme, "email", { enabled: true, config: { host: "127.0.0.1", port: smtp.port, from: "alerts@acme.test" } });
});

afterEach(async () => {
  clock.set(START);
  await putQuietHours(acme, { org: null, channels: {} }, START);
  await withTenant(acme, (tx) => tx.notificationUnsubscribe.deleteMany({}));
});

afterAll(async () => {
  await closeQueue();
  await smtp.close();
});

let seq = 0;
async function firingRule(channels: ("email" | "in_app")[]) {
  seq += 1;
  const body = { kind: "clone" as const, key: `sales.pref.t${seq}`, name: `Pref ${seq}`, description: "", base_rule_key: "sales.gap_to_target", thresholds: { gap_pct: 0 }, severity: "critical" as const, default_channels: channels, cadence_cron: "0 6 * * *" };
  return createRule(acme, body, clock.now());
}

async function runOnce(ruleId: string) {
  await triggerRule(acme, ruleId, rt);
  await drainQueues(rt);
  return withTenant(acme, (tx) => tx.notificationDelivery.findMany({ where: { ruleId }, orderBy: [{ channel: "asc" }, { recipient: "asc" }] }));
}

describe("quiet-hour windows", () => {
  it("reads local wall-clock time in the organization's zone, wrapping past midnight", () => {
    const overnight = { start: "22:00", end: "07:00", action: "defer" as const };
    expect(quietUntil(overnight, START, "America/New_York")?.toISOString()).toBe("2025-06-10T11:00:00.000Z");
    expect(quietUntil(overnight, START, "UTC")).toBeNull();
    expect(quietUntil(overnight, new Date("2025-06-10T23:30:00Z"), "UTC")?.toISOString()).toBe("2025-06-11T07:00:00.000Z");
    const lunch = { start: "12:00", end: "13:00", action: "skip" as const };
    expect(quietUntil(lunch, new Date("2025-06-10T09:59:30Z"), "Europe/Berlin")).toBeNull();
    expect(quietUntil(lunch, new Date("2025-06-10T10:15:30Z"), "Europe/Berlin")?.toISOString()).toBe("2025-06-10T11:00:00.000Z");
    expect(quietUntil(lunch, new Date("2025-06-10T11:00:00Z"), "Europe/Berlin")).toBeNull();
  });
});

describe("quiet hours in the pipeline", () => {
  it("defers a delivery to the end of the org's window and delivers it then", async () => {
    await putQuietHours(acme, { org: { start: "22:00", end: "07:00", action: "defer" }, channels: {} }, START);
    const rule = await firingRule(["in_app"]);
    const [d] = await runOnce(rule.id);
    expect(d).toMatchObject({ status: "pending", attempts: 0 });
    expect(d.reason).toBe("deferred by quiet hours 22:00–07:00 America/New_York; sends at 2025-06-10T11:00:00.000Z");
    expect(d.nextAttemptAt?.toISOString()).toBe("2025-06-10T11:00:00.000Z");
    expect(await withTenant(acme, (tx) => tx.notificationInboxItem.count({ where: { deliveryId: d.id } }))).toBe(0);

    clock.set(d.nextAttemptAt!);
    await drainQueues(rt);
    const after = await withTenant(acme, (tx) => tx.notificationDelivery.findUniqueOrThrow({ where: { id: d.id } }));
    expect(after).toMatchObject({ status: "delivered", attempts: 1 });
  });

  it("lets a channel's own window override the org's: email skipped, in-app deferred", async () => {
    await putQuietHours(acme, { org: { start: "22:00", end: "07:00", action: "defer" }, channels: { email: { start: "04:30", end: "05:30", action: "skip" } } }, START);
    const rule = await firingRule(["email", "in_app"]);
    const before = smtp.received.length;
    const rows = await runOnce(rule.id);
    const email = rows.filter((r) => r.channel === "email");
    expect(email.length).toBeGreaterThan(0);
    expect(email.every((r) => r.status === "skipped" && r.reason === "quiet hours 04:30–05:30 America/New_York")).toBe(true);
    expect(rows.filter((r) => r.channel === "in_app").every((r) => r.status === "pending" && r.reason.startsWith("deferred by quiet hours"))).toBe(true);
    expect(smtp.received.length).toBe(before);
  });

  it("sends right away outside every window", async () => {
    await putQuietHours(acme, { org: { start: "12:00", end: "13:00", action: "skip" }, channels: {} }, START);
    const rule = await firingRule(["in_app"]);
    const rows = await runOnce(rule.id);
    expect(rows.every((r) => r.status === "delivered")).toBe(true);
  });
});

describe("unsubscribes in the pipeline", () => {
  it("skips a user unsubscribed from a rule on every channel that reaches them, and only for that rule", async () => {
    const rule = await firingRule(["email", "in_app"]);
    const other = await firingRule(["in_app"]);
    const optOut = await createUnsubscribe(acme, { user_id: "usr_acme_admin", rule_key: rule.key }, START);
    // The admin page names the member, not their id.
    expect(optOut).toMatchObject({ user_id: "usr_acme_admin", user_name: "Acme Retail Admin" });
    const rows = await runOnce(rule.id);
    const mine = rows.filter((r) => r.recipient === "usr_acme_admin" || r.recipient === "admin@acme.test");
    expect(mine.map((r) => r.channel).sort()).toEqual(["email", "in_app"]);
    expect(mine.every((r) => r.status === "skipped" && r.reason === "recipient unsubscribed from this rule")).toBe(true);
    const elsewhere = await runOnce(other.id);
    expect(elsewhere.find((r) => r.recipient === "usr_acme_admin")?.status).toBe("delivered");
  });

  it("drops an address that left its only group, keeps one still in another group, and honours an all-rules opt-out", async () => {
    const rule = await firingRule(["email"]);
    const ops = await createGroupSubscription(acme, { rule_key: rule.key, group_name: "ops", members: ["one@ext.test", "two@ext.test", "three@ext.test"] }, START);
    await createGroupSubscription(acme, { rule_key: rule.key, group_name: "finance", members: ["two@ext.test"] }, START);
    await createUnsubscribe(acme, { address: "one@ext.test", group_subscription_id: ops.id }, START);
    await createUnsubscribe(acme, { address: "two@ext.test", group_subscription_id: ops.id }, START);
    await createUnsubscribe(acme, { address: "three@ext.test" }, START);
    const before = smtp.received.length;
    const rows = await runOnce(rule.id);
    const by = Object.fromEntries(rows.map((r) => [r.recipient, r]));
    expect(by["one@ext.test"]).toMatchObject({ status: "skipped", reason: "recipient unsubscribed from group 'ops'" });
    expect(by["two@ext.test"]).toMatchObject({ status: "delivered" });
    expect(by["three@ext.test"]).toMatchObject({ status: "skipped", reason: "recipient unsubscribed from all notifications" });
    const to = smtp.received.slice(before).flatMap((m) => m.to);
    expect(to).toContain("two@ext.test");
    expect(to).not.toContain("one@ext.test");
    expect(to).not.toContain("three@ext.test");
  });
});

describe("preference routes", () => {
  it("creates, lists and deletes unsubscribes; validates the body; refuses duplicates", async () => {
    const rule = await firingRule(["in_app"]);
    const created = await call(unsubscribes.POST, "POST", `${U}/unsubscribes`, { token: admin, body: { address: "Someone@Ext.test", rule_key: rule.key } });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ address: "someone@ext.test", scope: "rule", rule_key: rule.key, user_id: null, user_name: null });
    const again = await call(unsubscribes.POST, "POST", `${U}/unsubscribes`, { token: admin, body: { address: "someone@ext.test", rule_key: rule.key } });
    expect(again.status).toBe(409);
    const both = await call(unsubscribes.POST, "POST", `${U}/unsubscribes`, { token: admin, body: { address: "a@b.test", user_id: "usr_acme_admin" } });
    expect(both.status).toBe(422);
    const unknown = await call(unsubscribes.POST, "POST", `${U}/unsubscribes`, { token: admin, body: { user_id: "usr_nobody", rule_key: "no.such_rule" } });
    expect(unknown.status).toBe(422);
    expect(unknown.json.detail.map((d: { loc: string[] }) => d.loc.at(-1)).sort()).toEqual(["rule_key", "user_id"]);
    const list = await call(unsubscribes.GET, "GET", `${U}/unsubscribes`, { token: admin });
    expect(list.json.items.map((i: { id: string }) => i.id)).toContain(created.json.id);
    const del = await call(unsubscribe.DELETE, "DELETE", `${U}/unsubscribes/${created.json.id}`, { token: admin, params: { id: created.json.id } });
    expect(del.status).toBe(204);
    const gone = await call(unsubscribe.DELETE, "DELETE", `${U}/unsubscribes/${created.json.id}`, { token: admin, params: { id: created.json.id } });
    expect(gone.status).toBe(404);
  });

  it("keeps organizations apart: another org's ids are 404 or unknown, its lists empty", async () => {
    const rule = await firingRule(["email"]);
    const group = await createGroupSubscription(acme, { rule_key: rule.key, group_name: "ops", members: ["x@ext.test"] }, START);
    const created = await call(unsubscribes.POST, "POST", `${U}/unsubscribes`, { token: admin, body: { user_id: "usr_acme_analyst" } });
    expect(created.status).toBe(201);
    const foreignDelete = await call(unsubscribe.DELETE, "DELETE", `${U}/unsubscribes/${created.json.id}`, { token: globex, params: { id: created.json.id } });
    expect(foreignDelete.status).toBe(404);
    const foreignList = await call(unsubscribes.GET, "GET", `${U}/unsubscribes`, { token: globex });
    expect(foreignList.json.items).toEqual([]);
    const foreignRefs = await call(unsubscribes.POST, "POST", `${U}/unsubscribes`, { token: globex, body: { user_id: "usr_acme_admin", group_subscription_id: group.id } });
    expect(foreignRefs.status).toBe(422);
    await putQuietHours(acme, { org: { start: "22:00", end: "07:00", action: "defer" }, channels: {} }, START);
    const foreignQuiet = await call(quietHours.GET, "GET", `${U}/quiet-hours`, { token: globex });
    expect(foreignQuiet.json).toMatchObject({ time_zone: "Europe/Berlin", org: null });
  });

  it("sets and reads quiet hours in the org time zone, and rejects bad windows", async () => {
    const put = await call(quietHours.PUT, "PUT", `${U}/quiet-hours`, {
      token: admin,
      body: { org: { start: "22:00", end: "07:00", action: "defer" }, channels: { slack: { start: "18:00", end: "09:00", action: "skip" } } },
    });
    expect(put.status).toBe(200);
    const got = await call(quietHours.GET, "GET", `${U}/quiet-hours`, { token: admin });
    expect(got.json).toEqual({
      time_zone: "America/New_York",
      org: { start: "22:00", end: "07:00", action: "defer" },
      channels: { email: null, slack: { start: "18:00", end: "09:00", action: "skip" }, webhook: null, in_app: null },
    });
    const bad = await call(quietHours.PUT, "PUT", `${U}/quiet-hours`, { token: admin, body: { org: { start: "25:00", end: "07:00", action: "later" }, channels: { sms: null } } });
    expect(bad.status).toBe(422);
    const same = await call(quietHours.PUT, "PUT", `${U}/quiet-hours`, { token: admin, body: { org: { start: "07:00", end: "07:00", action: "skip" } } });
    expect(same.status).toBe(422);
  });

  it("is for admins only (403)", async () => {
    for (const [handler, method, path, body] of [
      [unsubscribes.GET, "GET", "unsubscribes", undefined],
      [unsubscribes.POST, "POST", "unsubscribes", { address: "a@b.test" }],
      [quietHours.GET, "GET", "quiet-hours", undefined],
      [quietHours.PUT, "PUT", "quiet-hours", { org: null }],
    ] as const) {
      const res = await call(handler, method, `${U}/${path}`, { token: analyst, body });
      expect(res.status, `${method} ${path}`).toBe(403);
    }
    const del = await call(unsubscribe.DELETE, "DELETE", `${U}/unsubscribes/nus_x`, { token: analyst, params: { id: "nus_x" } });
    expect(del.status).toBe(403);
  });
});
