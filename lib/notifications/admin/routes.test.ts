import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, tokenFor } from "@/test/helpers";
import { withTenant } from "@/lib/db/tenant";
import * as channelConfigs from "@/app/api/v1/notifications/admin/channel-configs/route";
import * as channelConfig from "@/app/api/v1/notifications/admin/channel-configs/[kind]/route";
import * as channelTest from "@/app/api/v1/notifications/admin/channel-configs/[kind]/test/route";
import * as baseRules from "@/app/api/v1/notifications/admin/base-rules/route";
import * as rules from "@/app/api/v1/notifications/admin/custom-rules/route";
import * as rule from "@/app/api/v1/notifications/admin/custom-rules/[id]/route";
import * as trigger from "@/app/api/v1/notifications/admin/custom-rules/[id]/trigger/route";
import * as groups from "@/app/api/v1/notifications/admin/group-subscriptions/route";
import * as group from "@/app/api/v1/notifications/admin/group-subscriptions/[id]/route";
import * as deadLetters from "@/app/api/v1/notifications/admin/dead-letters/route";
import * as requeue from "@/app/api/v1/notifications/admin/dead-letters/[id]/requeue/route";
import * as health from "@/app/api/v1/notification-channels/delivery-health/route";
import * as inbox from "@/app/api/v1/notifications/inbox/route";
import * as inboxRead from "@/app/api/v1/notifications/inbox/[id]/read/route";
import { closeQueue } from "@/lib/job-queue";
import { startReceiver, startSmtp } from "@/test/support/notification-servers";

process.env.NOTIFICATIONS_CONFIG = JSON.stringify({ url_allow_list: ["127.0.0.1"], in_process_worker: false });

const U = "http://localhost:3000/api/v1/notifications/admin";
let admin: string;
let analyst: string;
let manager: string;
let globex: string;

const ruleBody = (key: string, extra: Record<string, unknown> = {}) => ({
  kind: "clone",
  key,
  name: "East gap",
  description: "Gap to target, stricter",
  base_rule_key: "sales.gap_to_target",
  thresholds: { gap_pct: 5 },
  severity: "critical",
  default_channels: ["in_app"],
  cadence_cron: "*/15 * * * *",
  ...extra,
});

let smtp: Awaited<ReturnType<typeof startSmtp>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let ruleId: string;

beforeAll(async () => {
  [admin, analyst, manager, globex] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst"), tokenFor("acme", "general_manager"), tokenFor("globex", "admin")]);
  smtp = await startSmtp();
  receiver = await startReceiver();
  const created = await call(rules.POST, "POST", `${U}/custom-rules`, { token: admin, body: ruleBody("sales.gap.base") });
  expect(created.status).toBe(201);
  ruleId = created.json.id;
});

afterAll(async () => {
  await closeQueue();
  await smtp.close();
  await receiver.close();
});

describe("channel configs", () => {
  it("stores an email provider, masks its password and sends a test message to a real SMTP server", async () => {
    const put = await call(channelConfig.PUT, "PUT", `${U}/channel-configs/email`, {
      token: admin,
      params: { kind: "email" },
      body: { config: { host: "127.0.0.1", port: smtp.port, user: "mailer", password: "hunter2-hunter2", from: "alerts@acme.test" } },
    });
    expect(put.status).toBe(200);
    expect(put.json.config).toMatchObject({ host: "127.0.0.1", password: "****ter2" });
    expect(put.text).not.toContain("hunter2-hunter2");
    // Leaving the password out keeps the stored one.
    const again = await call(channelConfig.PUT, "PUT", `${U}/channel-configs/email`, {
      token: admin,
      params: { kind: "email" },
      body: { config: { host: "127.0.0.1", port: smtp.port, user: "mailer", from: "alerts@acme.test" } },
    });
    expect(again.json.config.password).toBe("****ter2");
    const test = await call(channelTest.POST, "POST", `${U}/channel-configs/email/test`, { token: admin, params: { kind: "email" } });
    expect(test.status).toBe(200);
    expect(test.json).toMatchObject({ ok: true, recipient: "admin@acme.test" });
    expect(smtp.received.at(-1)?.raw).toContain("Quarry test message");
    const list = await call(channelConfigs.GET, "GET", `${U}/channel-configs`, { token: admin });
    expect(list.json.items.map((i: { kind: string }) => i.kind)).toEqual(["email", "slack", "webhook", "in_app"]);
    expect(list.text).not.toContain("hunter2");
  });

  it("reports a failing test send without a 500", async () => {
    await call(channelConfig.PUT, "PUT", `${U}/channel-configs/webhook`, { token: admin, params: { kind: "webhook" }, body: { config: { url: `${receiver.url}/hook`, signing_secret: "0123456789abcdef0123" } } });
    receiver.state.failWith = () => 503;
    const test = await call(channelTest.POST, "POST", `${U}/channel-configs/webhook/test`, { token: admin, params: { kind: "webhook" } });
    receiver.state.failWith = () => null;
    expect(test.status).toBe(200);
    expect(test.json).toMatchObject({ ok: false });
    expect(test.json.detail).toContain("HTTP 503");
  });

  it("rate limits the test action with 429 and Retry-After", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 11 && !statuses.includes(429); i++) {
      const res = await call(channelTest.POST, "POST", `${U}/channel-configs/in_app/test`, { token: admin, params: { kind: "in_app" } });
      statuses.push(res.status);
      if (res.status === 429) expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    // Ten a minute per caller, the tests above included.
    expect(statuses.at(-1)).toBe(429);
    expect(statuses.slice(0, -1).every((s) => s === 200)).toBe(true);
  });

  it.each([
    ["webhook", { url: "http://169.254.169.254/latest/meta-data", signing_secret: "0123456789abcdef" }, "url"],
    ["webhook", { url: "https://10.0.0.8/hook", signing_secret: "0123456789abcdef" }, "url"],
    ["webhook", { url: "https://localhost/hook", signing_secret: "0123456789abcdef" }, "url"],
    ["webhook", { url: "https://[::1]/hook", signing_secret: "0123456789abcdef" }, "url"],
    // Spellings of inward addresses that a naive string check misses: IPv4-mapped IPv6, decimal and hex IPv4, CGNAT, cloud metadata names.
    ["webhook", { url: "https://[::ffff:10.0.0.1]/hook", signing_secret: "0123456789abcdef" }, "url"],
    ["webhook", { url: "https://167772161/hook", signing_secret: "0123456789abcdef" }, "url"],
    ["webhook", { url: "https://0x7f000002/hook", signing_secret: "0123456789abcdef" }, "url"],
    ["webhook", { url: "https://100.64.0.1/hook", signing_secret: "0123456789abcdef" }, "url"],
    ["webhook", { url: "https://metadata.google.internal/computeMetadata/v1/", signing_secret: "0123456789abcdef" }, "url"],
    ["webhook", { url: "https://user:pw@example.com/hook", signing_secret: "0123456789abcdef" }, "url"],
    ["slack", { mode: "webhook", webhook_url: "https://evil.example.com/services/x" }, "webhook_url"],
    ["slack", { mode: "webhook", webhook_url: "http://hooks.slack.com/services/x" }, "webhook_url"],
    ["email", { host: "192.168.1.1", from: "a@b.test" }, "host"],
  ])("refuses an unsafe %s target (%j)", async (kind, config, field) => {
    const res = await call(channelConfig.PUT, "PUT", `${U}/channel-configs/${kind}`, { token: admin, params: { kind }, body: { config } });
    expect(res.status).toBe(422);
    expect(res.json.detail[0].loc).toEqual(["body", "config", field]);
  });

  it("rejects an unknown kind listing the allowed ones, bad fields, and a missing secret", async () => {
    const unknown = await call(channelConfig.PUT, "PUT", `${U}/channel-configs/sms`, { token: admin, params: { kind: "sms" }, body: { config: {} } });
    expect(unknown.status).toBe(422);
    expect(unknown.json.detail[0].msg).toMatch(/email.*slack.*webhook.*in_app/);
    const badPort = await call(channelConfig.PUT, "PUT", `${U}/channel-configs/email`, { token: admin, params: { kind: "email" }, body: { config: { host: "127.0.0.1", port: "25", from: "x" } } });
    expect(badPort.status).toBe(422);
    expect(badPort.json.detail.map((d: { loc: string[] }) => d.loc.at(-1)).sort()).toEqual(["from", "port"]);
    const noSecret = await call(channelConfig.PUT, "PUT", `${U}/channel-configs/slack`, { token: admin, params: { kind: "slack" }, body: { config: { mode: "bot", channel: "#alerts" } } });
    expect(noSecret.status).toBe(422);
    expect(noSecret.json.detail[0].loc).toEqual(["body", "config", "bot_token"]);
  });
});

describe("custom rules", () => {
  it("creates a clone with next runs, and lists, gets and disables it", async () => {
    const got = await call(rule.GET, "GET", `${U}/custom-rules/${ruleId}`, { token: admin, params: { id: ruleId } });
    expect(got.status).toBe(200);
    expect(got.json).toMatchObject({ key: "sales.gap.base", kind: "clone", thresholds: { gap_pct: 5 }, enabled: true });
    expect(got.json.next_runs).toHaveLength(5);
    expect(new Date(got.json.next_runs[1]).getTime() - new Date(got.json.next_runs[0]).getTime()).toBe(15 * 60_000);
    const list = await call(rules.GET, "GET", `${U}/custom-rules`, { token: admin });
    expect(list.json.items.map((r: { key: string }) => r.key)).toContain("sales.gap.base");
    const off = await call(rule.PATCH, "PATCH", `${U}/custom-rules/${ruleId}`, { token: admin, params: { id: ruleId }, body: { enabled: false } });
    expect(off.json).toMatchObject({ enabled: false, next_runs: [] });
    const triggered = await call(trigger.POST, "POST", `${U}/custom-rules/${ruleId}/trigger`, { token: admin, params: { id: ruleId } });
    expect(triggered.status).toBe(409);
    await call(rule.PATCH, "PATCH", `${U}/custom-rules/${ruleId}`, { token: admin, params: { id: ruleId }, body: { enabled: true } });
  });

  it.each([
    ["an invalid cron", { cadence_cron: "*/15 * * *" }, ["body", "cadence_cron"]],
    ["a six-field cron", { cadence_cron: "0 */15 * * * *" }, ["body", "cadence_cron"]],
    ["an unknown base rule", { base_rule_key: "sales.nope" }, ["body", "base_rule_key"]],
    ["a threshold of the wrong type", { thresholds: { gap_pct: "ten" } }, ["body", "thresholds", "gap_pct"]],
    ["an undeclared threshold", { thresholds: { drop_pct: 3 } }, ["body", "thresholds"]],
    ["a severity not allowed", { severity: "apocalyptic" }, ["body", "severity"]],
    ["a channel not allowed", { default_channels: ["pager"] }, ["body", "default_channels", 0]],
    ["a channel not configured", { default_channels: ["in_app", "slack"] }, ["body", "default_channels", 1]],
    ["a non-dotted key", { key: "Sales Gap" }, ["body", "key"]],
    ["another kind", { kind: "custom" }, ["body", "kind"]],
  ])("rejects %s with 422", async (_what, extra, loc) => {
    const res = await call(rules.POST, "POST", `${U}/custom-rules`, { token: admin, body: ruleBody("sales.gap.bad", extra) });
    expect(res.status).toBe(422);
    expect(res.json.detail[0].loc).toEqual(loc);
  });

  it("rejects a duplicate key with 409", async () => {
    const res = await call(rules.POST, "POST", `${U}/custom-rules`, { token: admin, body: ruleBody("sales.gap.base") });
    expect(res.status).toBe(409);
  });

  it("lists the base rules with their thresholds", async () => {
    const res = await call(baseRules.GET, "GET", `${U}/base-rules`, { token: admin });
    expect(res.json.items.map((r: { key: string }) => r.key)).toEqual(["sales.gap_to_target", "sales.drop_vs_last_week", "sales.revenue_below_floor", "documents.index_failed"]);
    expect(res.json.items[0].thresholds.properties.gap_pct.type).toBe("number");
  });

  it("rate limits the manual trigger with 429 and Retry-After", async () => {
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < 6 && !limited; i++) {
      const res = await call(trigger.POST, "POST", `${U}/custom-rules/${ruleId}/trigger`, { token: admin, params: { id: ruleId } });
      statuses.push(res.status);
      if (res.status === 429) limited = res;
    }
    // Five calls a minute per caller (one was spent above on the disabled rule).
    expect(statuses).toEqual([202, 202, 202, 202, 429]);
    expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited?.json.detail).toMatch(/retry in/);
  });
});

describe("group subscriptions", () => {
  it("fans a rule out to an email group, lists and deletes it", async () => {
    await call(rule.PATCH, "PATCH", `${U}/custom-rules/${ruleId}`, { token: admin, params: { id: ruleId }, body: { default_channels: ["in_app", "email"] } });
    const created = await call(groups.POST, "POST", `${U}/group-subscriptions`, { token: admin, body: { rule_key: "sales.gap.base", group_name: "Regional managers", members: ["East@acme.test", "west@acme.test"] } });
    expect(created.status).toBe(201);
    expect(created.json.members).toEqual(["east@acme.test", "west@acme.test"]);
    const dup = await call(groups.POST, "POST", `${U}/group-subscriptions`, { token: admin, body: { rule_key: "sales.gap.base", group_name: "Regional managers", members: ["x@acme.test"] } });
    expect(dup.status).toBe(409);
    const bad = await call(groups.POST, "POST", `${U}/group-subscriptions`, { token: admin, body: { rule_key: "sales.nope", group_name: "G", members: ["not-an-email"] } });
    expect(bad.status).toBe(422);
    const list = await call(groups.GET, "GET", `${U}/group-subscriptions`, { token: admin });
    expect(list.json.items).toHaveLength(1);
    const foreign = await call(group.DELETE, "DELETE", `${U}/group-subscriptions/${created.json.id}`, { token: globex, params: { id: created.json.id } });
    expect(foreign.status).toBe(404);
    const del = await call(group.DELETE, "DELETE", `${U}/group-subscriptions/${created.json.id}`, { token: admin, params: { id: created.json.id } });
    expect(del.status).toBe(204);
  });
});

describe("dead letters, delivery health and inbox", () => {
  it("lists dead letters with paging and requeues one; health explains each delivery", async () => {
    const deadId = await withTenant({ orgId: "org_acme" }, async (tx) => {
      const run = await tx.notificationRuleRun.create({ data: { id: "nrn_dead", orgId: "org_acme", ruleId, scheduledFor: new Date(), trigger: "manual", status: "fired" } });
      const now = new Date();
      await tx.notificationDelivery.create({
        data: { id: "ndl_dead", orgId: "org_acme", runId: run.id, ruleId, channel: "in_app", recipient: "usr_acme_admin", status: "dead", reason: "failed after 6 attempts", subject: "S", body: "B", severity: "critical", dedupeKey: "k", attempts: 6, maxAttempts: 6, lastError: "HTTP 503", createdAt: now, updatedAt: now },
      });
      return "ndl_dead";
    });
    const list = await call(deadLetters.GET, "GET", `${U}/dead-letters?limit=10&offset=0`, { token: admin });
    expect(list.status).toBe(200);
    expect(list.json).toMatchObject({ total: 1, limit: 10, offset: 0 });
    expect(list.json.items[0]).toMatchObject({ id: deadId, last_error: "HTTP 503", rule_key: "sales.gap.base" });
    const pastTheEnd = await call(deadLetters.GET, "GET", `${U}/dead-letters?offset=1`, { token: admin });
    expect(pastTheEnd.json).toMatchObject({ items: [], total: 1, limit: 50, offset: 1 });
    const badPage = await call(deadLetters.GET, "GET", `${U}/dead-letters?limit=0`, { token: admin });
    expect(badPage.status).toBe(422);

    const foreign = await call(requeue.POST, "POST", `${U}/dead-letters/${deadId}/requeue`, { token: globex, params: { id: deadId } });
    expect(foreign.status).toBe(404);
    const ok = await call(requeue.POST, "POST", `${U}/dead-letters/${deadId}/requeue`, { token: admin, params: { id: deadId } });
    expect(ok.status).toBe(202);
    expect(ok.json).toMatchObject({ status: "pending", attempts: 0 });
    const twice = await call(requeue.POST, "POST", `${U}/dead-letters/${deadId}/requeue`, { token: admin, params: { id: deadId } });
    expect(twice.status).toBe(409);

    const h = await call(health.GET, "GET", "http://localhost:3000/api/v1/notification-channels/delivery-health?hours=24", { token: admin });
    expect(h.status).toBe(200);
    expect(h.json.recent.find((d: { id: string }) => d.id === deadId)).toMatchObject({ status: "pending", reason: "requeued by usr_acme_admin" });
    expect(h.json.channels.map((c: { channel: string }) => c.channel)).toEqual(["email", "slack", "webhook", "in_app"]);
    const other = await call(health.GET, "GET", "http://localhost:3000/api/v1/notification-channels/delivery-health", { token: globex });
    expect(other.json.recent).toEqual([]);
  });

  it("shows users only their own inbox and lets them mark items read", async () => {
    await withTenant({ orgId: "org_acme" }, (tx) =>
      tx.notificationInboxItem.create({ data: { id: "nib_1", orgId: "org_acme", userId: "usr_acme_analyst", deliveryId: "ndl_dead", title: "T", body: "B", severity: "info", createdAt: new Date() } }),
    );
    const mine = await call(inbox.GET, "GET", "http://localhost:3000/api/v1/notifications/inbox", { token: analyst });
    expect(mine.json).toMatchObject({ unread: 1, total: 1, limit: 50, offset: 0, items: [{ id: "nib_1", read_at: null }] });
    const adminView = await call(inbox.GET, "GET", "http://localhost:3000/api/v1/notifications/inbox", { token: admin });
    expect(adminView.json.items.map((i: { id: string }) => i.id)).not.toContain("nib_1");
    const foreign = await call(inboxRead.POST, "POST", "http://localhost:3000/api/v1/notifications/inbox/nib_1/read", { token: globex, params: { id: "nib_1" } });
    expect(foreign.status).toBe(404);
    const read = await call(inboxRead.POST, "POST", "http://localhost:3000/api/v1/notifications/inbox/nib_1/read", { token: analyst, params: { id: "nib_1" } });
    expect(read.json.read_at).not.toBeNull();
  });
});

describe("tenancy and roles", () => {
  it("answers 404 for another organization's rule ids", async () => {
    const get = await call(rule.GET, "GET", `${U}/custom-rules/${ruleId}`, { token: globex, params: { id: ruleId } });
    expect(get.status).toBe(404);
    const patch = await call(rule.PATCH, "PATCH", `${U}/custom-rules/${ruleId}`, { token: globex, params: { id: ruleId }, body: { enabled: false } });
    expect(patch.status).toBe(404);
    const trig = await call(trigger.POST, "POST", `${U}/custom-rules/${ruleId}/trigger`, { token: globex, params: { id: ruleId } });
    expect(trig.status).toBe(404);
    const list = await call(rules.GET, "GET", `${U}/custom-rules`, { token: globex });
    expect(list.json.items).toEqual([]);
    const configs = await call(channelConfigs.GET, "GET", `${U}/channel-configs`, { token: globex });
    expect(configs.json.items.find((i: { kind: string }) => i.kind === "email").configured).toBe(false);
    const dead = await call(deadLetters.GET, "GET", `${U}/dead-letters`, { token: globex });
    expect(dead.json.total).toBe(0);
    const subs = await call(groups.GET, "GET", `${U}/group-subscriptions`, { token: globex });
    expect(subs.json.items).toEqual([]);
  });

  it.each([
    ["GET channel-configs", () => call(channelConfigs.GET, "GET", `${U}/channel-configs`, { token: analyst })],
    ["PUT channel-configs", () => call(channelConfig.PUT, "PUT", `${U}/channel-configs/in_app`, { token: analyst, params: { kind: "in_app" }, body: {} })],
    ["POST channel test", () => call(channelTest.POST, "POST", `${U}/channel-configs/in_app/test`, { token: analyst, params: { kind: "in_app" } })],
    ["GET base-rules", () => call(baseRules.GET, "GET", `${U}/base-rules`, { token: analyst })],
    ["POST custom-rules", () => call(rules.POST, "POST", `${U}/custom-rules`, { token: analyst, body: ruleBody("sales.x.y") })],
    ["GET custom-rules", () => call(rules.GET, "GET", `${U}/custom-rules`, { token: analyst })],
    ["GET custom-rule", () => call(rule.GET, "GET", `${U}/custom-rules/${ruleId}`, { token: analyst, params: { id: ruleId } })],
    ["PATCH custom-rule", () => call(rule.PATCH, "PATCH", `${U}/custom-rules/${ruleId}`, { token: analyst, params: { id: ruleId }, body: {} })],
    ["POST trigger", () => call(trigger.POST, "POST", `${U}/custom-rules/${ruleId}/trigger`, { token: analyst, params: { id: ruleId } })],
    ["POST group-subscriptions", () => call(groups.POST, "POST", `${U}/group-subscriptions`, { token: analyst, body: {} })],
    ["GET group-subscriptions", () => call(groups.GET, "GET", `${U}/group-subscriptions`, { token: analyst })],
    ["DELETE group-subscription", () => call(group.DELETE, "DELETE", `${U}/group-subscriptions/x`, { token: analyst, params: { id: "x" } })],
    ["GET dead-letters", () => call(deadLetters.GET, "GET", `${U}/dead-letters`, { token: analyst })],
    ["POST requeue", () => call(requeue.POST, "POST", `${U}/dead-letters/x/requeue`, { token: analyst, params: { id: "x" } })],
    ["GET delivery-health", () => call(health.GET, "GET", "http://localhost:3000/api/v1/notification-channels/delivery-health", { token: manager })],
  ])("%s is admin-only (403)", async (_name, request) => {
    const res = await request();
    expect(res.status).toBe(403);
    expect(res.json.detail).toMatch(/admin/);
  });
});
