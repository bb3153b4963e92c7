import crypto from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "@/lib/access/roles";
import { getDb } from "@/lib/db/client";
import { withTenant } from "@/lib/db/tenant";
import { putChannelConfig, listChannelConfigs } from "@/lib/notifications/admin/channels";
import { manualClock } from "@/lib/notifications/clock";
import { createRule, getRule, listRules, updateRule } from "@/lib/notifications/admin/rules";
import { listDemoOutbox, seedDemoOutbox } from "@/lib/notifications/admin/demo-outbox";
import { testChannel } from "@/lib/notifications/admin/channel-test";
import { createGroupSubscription } from "@/lib/notifications/admin/group-subscriptions";
import { evaluateRun } from "@/lib/notifications/pipeline/evaluate";
import { tick } from "@/lib/notifications/pipeline/scheduler";
import { triggerRule } from "@/lib/notifications/admin/trigger-rule";
import { requeueDeadLetter } from "@/lib/notifications/admin/dead-letters";
import { type Runtime } from "@/lib/notifications/pipeline/runtime";
import { closeQueue, getQueue, QUEUES, DELIVER_EXPIRE_SECONDS } from "@/lib/job-queue";
import { startReceiver, startSmtp } from "@/test/support/notification-servers";
import { warehouseWindow } from "@/lib/demo/seed";
import { drainQueues } from "@/lib/worker";

process.env.NOTIFICATIONS_CONFIG = JSON.stringify({ url_allow_list: ["127.0.0.1"], in_process_worker: false, max_attempts: 6, backoff_base_seconds: 30 });

const acme: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "bearer" };
// 09:00 UTC on the 10th of the demo warehouse's seventh month, whichever day it was seeded (it starts 23 months back):
// a first-year month, whose targets are its own total plus 5%, so on the 10th every location is behind its target.
const WAREHOUSE_START = warehouseWindow(new Date(), "America/New_York").from;
const START = new Date(Date.UTC(Number(WAREHOUSE_START.slice(0, 4)), Number(WAREHOUSE_START.slice(5, 7)) - 1 + 6, 10, 9));
const at = (minutesAfterStart: number) => new Date(START.getTime() + minutesAfterStart * 60_000).toISOString();
/** The day before START (the organization's zone is behind UTC at 09:00 UTC: the same date there). */
const DAY_BEFORE = at(-24 * 60).slice(0, 10);
const SECRET = "whsec-0123456789abcdef";

let smtp: Awaited<ReturnType<typeof startSmtp>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const clock = manualClock(START);
let rt: Runtime & { queue: Awaited<ReturnType<typeof getQueue>> };

beforeAll(async () => {
  smtp = await startSmtp();
  receiver = await startReceiver();
  rt = { clock, queue: await getQueue(false) };
  await putChannelConfig(acme, "email", { enabled: true, config: { host: "127.0.0.1", port: smtp.port, secure: false, from: "alerts@acme.test", password: "smtp-password-1234" } });
  await putChannelConfig(acme, "webhook", { enabled: true, config: { url: `${receiver.url}/hook`, signing_secret: SECRET } });
  await putChannelConfig(acme, "slack", { enabled: true, config: { mode: "webhook", webhook_url: `${receiver.url}/slack/T000/B000/XXXXXXXXXXXXXXXX` } });
});

afterAll(async () => {
  await closeQueue();
  await smtp.close();
  await receiver.close();
});

const deliveriesOf = (ruleId: string) => withTenant(acme, (tx) => tx.notificationDelivery.findMany({ where: { ruleId }, orderBy: [{ channel: "asc" }, { recipient: "asc" }] }));

let seq = 0;
async function newRule(channels: ("email" | "slack" | "webhook" | "in_app")[], cron = "*/15 * * * *") {
  seq += 1;
  return createRule(
    acme,
    { kind: "clone", key: `sales.gap_to_target.t${seq}`, name: `Test ${seq}`, description: "", base_rule_key: "sales.gap_to_target", thresholds: { gap_pct: 0 }, severity: "critical", default_channels: channels, cadence_cron: cron },
    clock.now(),
  );
}

/** Drains the queues, then moves the clock to the earliest retry and drains again, until nothing of the rule is retrying. */
async function runRetries(ruleId: string, onAttempt?: () => void) {
  for (;;) {
    await drainQueues(rt);
    onAttempt?.();
    const retrying = (await deliveriesOf(ruleId)).filter((d) => d.status === "retrying");
    if (retrying.length === 0) return;
    clock.set(new Date(Math.min(...retrying.map((d) => d.nextAttemptAt!.getTime()))));
  }
}

/** Messages the SMTP server accepted since `from`, counted per recipient. */
function mailsPerRecipient(from: number) {
  const counts = new Map<string, number>();
  for (const mail of smtp.received.slice(from)) for (const to of mail.to) counts.set(to, (counts.get(to) ?? 0) + 1);
  return Object.fromEntries([...counts].sort());
}

describe("channel secrets", () => {
  it("are sealed at rest and masked in responses", async () => {
    const { system } = await getDb();
    const rows = await system.query<{ kind: string; secrets_enc: string; settings: unknown }>("SELECT kind, secrets_enc, settings FROM notification_channel_configs WHERE org_id = 'org_acme'");
    const text = JSON.stringify(rows);
    expect(text).not.toContain("smtp-password-1234");
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain("XXXXXXXXXXXXXXXX");
    const list = await listChannelConfigs(acme);
    const email = list.items.find((i) => i.kind === "email");
    expect((email?.config as Record<string, unknown>).password).toBe("****1234");
    expect(JSON.stringify(list)).not.toContain(SECRET);
  });
});

describe("scheduling", () => {
  it("queues each cron occurrence once, even when two workers tick at the same time", async () => {
    clock.set(START);
    const rule = await newRule(["in_app"]);
    expect((await tick(rt)).queued).toBe(0);
    clock.set(new Date(START.getTime() + 15 * 60_000));
    const [a, b] = await Promise.all([tick(rt), tick(rt)]);
    expect(a.queued + b.queued).toBe(1);
    // An hour later the four missed occurrences collapse into the latest one.
    clock.set(new Date(START.getTime() + 75 * 60_000 + 5_000));
    expect((await tick(rt)).queued).toBe(1);
    const runs = await withTenant(acme, (tx) => tx.notificationRuleRun.findMany({ where: { ruleId: rule.id }, orderBy: { scheduledFor: "asc" } }));
    expect(runs.map((r) => r.scheduledFor.toISOString())).toEqual([at(15), at(75)]);
    await updateRule(acme, rule.id, { enabled: false }, clock.now());
    await drainQueues(rt);
  });
});

describe("delivery", () => {
  it("delivers a fired rule by real SMTP, Slack, a signed webhook and the in-app inbox, and deduplicates a repeat", async () => {
    clock.set(START);
    const rule = await newRule(["email", "slack", "webhook", "in_app"]);
    const before = { mails: smtp.received.length, requests: receiver.received.length };
    await triggerRule(acme, rule.id, rt);
    await drainQueues(rt);
    const deliveries = await deliveriesOf(rule.id);
    expect(deliveries.length).toBeGreaterThanOrEqual(4);
    expect(deliveries.every((d) => d.status === "delivered")).toBe(true);

    const mail = smtp.received.slice(before.mails).find((m) => m.to.includes("admin@acme.test"));
    expect(mail?.from).toBe("alerts@acme.test");
    expect(mail?.raw).toMatch(/Subject: .*behind target/);
    const hook = receiver.received.slice(before.requests).find((r) => r.path === "/hook");
    expect(hook).toBeDefined();
    const [t, v1] = String(hook?.headers["x-quarry-signature"]).split(",").map((p) => p.split("=")[1]);
    expect(v1).toBe(crypto.createHmac("sha256", SECRET).update(`${t}.${hook?.body}`).digest("hex"));
    expect(JSON.parse(hook!.body)).toMatchObject({ rule_key: rule.key, severity: "critical" });
    const slack = receiver.received.slice(before.requests).find((r) => r.path.startsWith("/slack/"));
    expect(JSON.parse(slack!.body).text).toContain("[CRITICAL]");
    const inbox = await withTenant(acme, (tx) => tx.notificationInboxItem.findMany({ where: { userId: "usr_acme_admin" } }));
    expect(inbox.length).toBeGreaterThan(0);

    clock.advance(60_000);
    await triggerRule(acme, rule.id, rt);
    await drainQueues(rt);
    const second = (await deliveriesOf(rule.id)).filter((d) => d.createdAt.getTime() === clock.now().getTime());
    expect(second.length).toBe(deliveries.length);
    expect(second.every((d) => d.status === "skipped" && d.reason.startsWith("deduplicated"))).toBe(true);
  });

  it("retries a channel that is down for ten minutes with exponential backoff, then delivers once", async () => {
    clock.set(START);
    const outageEnds = START.getTime() + 10 * 60_000;
    receiver.state.failWith = (r) => (r.path === "/hook" && clock.now().getTime() < outageEnds ? 503 : null);
    const rule = await newRule(["webhook"]);
    const before = receiver.received.filter((r) => r.path === "/hook").length;
    await triggerRule(acme, rule.id, rt);
    const attemptTimes: number[] = [];
    for (;;) {
      await drainQueues(rt);
      const [d] = await deliveriesOf(rule.id);
      if (d.status !== "retrying") break;
      attemptTimes.push(clock.now().getTime());
      clock.set(d.nextAttemptAt!);
    }
    receiver.state.failWith = () => null;
    const [d] = await deliveriesOf(rule.id);
    expect(d.status).toBe("delivered");
    expect(d.attempts).toBe(6);
    expect(attemptTimes.slice(1).map((t, i) => (t - attemptTimes[i]) / 1000)).toEqual([30, 60, 120, 240]);
    expect(receiver.received.filter((r) => r.path === "/hook").length - before).toBe(1);
  });

  it("dead-letters after the last attempt with the last error, and a requeue delivers it", async () => {
    clock.set(START);
    receiver.state.failWith = (r) => (r.path === "/hook" ? 502 : null);
    const rule = await newRule(["webhook"]);
    await triggerRule(acme, rule.id, rt);
    for (;;) {
      await drainQueues(rt);
      const [d] = await deliveriesOf(rule.id);
      if (d.status !== "retrying") break;
      clock.set(d.nextAttemptAt!);
    }
    const [dead] = await deliveriesOf(rule.id);
    expect(dead).toMatchObject({ status: "dead", attempts: 6, reason: "failed after 6 attempts" });
    expect(dead.lastError).toContain("HTTP 502");

    receiver.state.failWith = () => null;
    await requeueDeadLetter(acme, dead.id, rt);
    await drainQueues(rt);
    const [again] = await deliveriesOf(rule.id);
    expect(again).toMatchObject({ status: "delivered", attempts: 1 });
  });

  it("dead-letters a permanent failure (4xx) at once", async () => {
    clock.set(START);
    receiver.state.failWith = (r) => (r.path === "/hook" ? 410 : null);
    const rule = await newRule(["webhook"]);
    await triggerRule(acme, rule.id, rt);
    await drainQueues(rt);
    receiver.state.failWith = () => null;
    const [d] = await deliveriesOf(rule.id);
    expect(d).toMatchObject({ status: "dead", attempts: 1, reason: "permanent failure on attempt 1" });
  });

  it("retries every recipient of an email group while SMTP answers 421 for ten minutes, then delivers each exactly once", async () => {
    clock.set(START);
    const outageEnds = START.getTime() + 10 * 60_000;
    smtp.state.rejectWith = () => (clock.now().getTime() < outageEnds ? 421 : null);
    const rule = await newRule(["email"]);
    const members = ["east@acme.test", "north@acme.test", "west@acme.test"];
    await createGroupSubscription(acme, { rule_key: rule.key, group_name: "Regional managers", members }, clock.now());
    const before = smtp.received.length;
    await triggerRule(acme, rule.id, rt);
    await runRetries(rule.id);
    smtp.state.rejectWith = () => null;

    const deliveries = await deliveriesOf(rule.id);
    const recipients = deliveries.map((d) => d.recipient);
    expect(recipients).toEqual(expect.arrayContaining(["admin@acme.test", ...members]));
    expect(deliveries.map((d) => [d.status, d.attempts])).toEqual(deliveries.map(() => ["delivered", 6]));
    expect(deliveries.every((d) => d.lastError?.includes("421"))).toBe(true);
    expect(mailsPerRecipient(before)).toEqual(Object.fromEntries(recipients.sort().map((r) => [r, 1])));
  });

  it("dead-letters every message of an outage longer than the retries, loses none, and a requeue sends each once", async () => {
    clock.set(START);
    smtp.state.rejectWith = () => 421;
    const rule = await newRule(["email"]);
    await createGroupSubscription(acme, { rule_key: rule.key, group_name: "Night shift", members: ["night@acme.test", "owl@acme.test"] }, clock.now());
    const before = smtp.received.length;
    await triggerRule(acme, rule.id, rt);
    await runRetries(rule.id);
    const dead = await deliveriesOf(rule.id);
    expect(dead.length).toBeGreaterThanOrEqual(3);
    expect(dead.every((d) => d.status === "dead" && d.attempts === 6 && d.reason === "failed after 6 attempts")).toBe(true);
    expect(smtp.received.length).toBe(before);

    smtp.state.rejectWith = () => null;
    for (const d of dead) await requeueDeadLetter(acme, d.id, rt);
    await runRetries(rule.id);
    const after = await deliveriesOf(rule.id);
    expect(after.map((d) => [d.id, d.status])).toEqual(dead.map((d) => [d.id, "delivered"]));
    expect(mailsPerRecipient(before)).toEqual(Object.fromEntries(dead.map((d) => [d.recipient, 1])));
  });

  it("picks up the job of a worker killed mid-delivery, and sends it once", async () => {
    clock.set(START);
    const rule = await newRule(["webhook"]);
    const run = await triggerRule(acme, rule.id, rt);
    const [evaluate] = await rt.queue.fetch<{ orgId: string; runId: string }>(QUEUES.evaluate);
    await evaluateRun(rt, evaluate.data);
    await rt.queue.complete(QUEUES.evaluate, evaluate.id);
    expect(evaluate.data.runId).toBe(run.id);

    // The worker takes the job and claims the delivery, then dies before sending.
    const [job] = await rt.queue.fetch(QUEUES.deliver);
    await withTenant(acme, (tx) => tx.notificationDelivery.updateMany({ where: { ruleId: rule.id }, data: { status: "sending", updatedAt: clock.now() } }));
    // pg-boss judges expiry on the database clock, which tests cannot move: age the job instead, then run its expiry pass.
    const { system } = await getDb();
    await system.query("UPDATE pgboss.job SET started_on = started_on - interval '1 hour' WHERE id = $1", [job.id]);
    await (rt.queue as unknown as { expire(): Promise<void> }).expire();
    clock.advance(DELIVER_EXPIRE_SECONDS * 1000);
    const before = receiver.received.filter((r) => r.path === "/hook").length;
    await drainQueues(rt);
    const [d] = await deliveriesOf(rule.id);
    expect(d).toMatchObject({ status: "delivered", attempts: 1 });
    expect(receiver.received.filter((r) => r.path === "/hook").length - before).toBe(1);
  });

  it("puts back a dead worker's job handed out just before its claim lapses, then sends it once", async () => {
    clock.set(START);
    const rule = await newRule(["webhook"]);
    await triggerRule(acme, rule.id, rt);
    const [evaluate] = await rt.queue.fetch<{ orgId: string; runId: string }>(QUEUES.evaluate);
    await evaluateRun(rt, evaluate.data);
    await rt.queue.complete(QUEUES.evaluate, evaluate.id);

    // The job expired (its clock starts when it is handed out), but the claim written a moment later has not lapsed.
    const [job] = await rt.queue.fetch(QUEUES.deliver);
    await withTenant(acme, (tx) => tx.notificationDelivery.updateMany({ where: { ruleId: rule.id }, data: { status: "sending", updatedAt: clock.now() } }));
    const { system } = await getDb();
    await system.query("UPDATE pgboss.job SET started_on = started_on - interval '1 hour' WHERE id = $1", [job.id]);
    await (rt.queue as unknown as { expire(): Promise<void> }).expire();
    clock.advance(DELIVER_EXPIRE_SECONDS * 1000 - 500);
    const before = receiver.received.filter((r) => r.path === "/hook").length;
    await drainQueues(rt);
    const [claimed] = await deliveriesOf(rule.id);
    expect(claimed).toMatchObject({ status: "sending", attempts: 0 });
    expect(receiver.received.filter((r) => r.path === "/hook").length - before).toBe(0);
    const waiting = await system.query<{ start_after: Date }>("SELECT start_after FROM pgboss.job WHERE name = $1 AND data->>'deliveryId' = $2 AND state = 'created'", [QUEUES.deliver, claimed.id]);
    expect(waiting.map((r) => r.start_after.getTime())).toEqual([claimed.updatedAt.getTime() + DELIVER_EXPIRE_SECONDS * 1000]);

    clock.advance(500);
    await drainQueues(rt);
    const [d] = await deliveriesOf(rule.id);
    expect(d).toMatchObject({ status: "delivered", attempts: 1 });
    expect(receiver.received.filter((r) => r.path === "/hook").length - before).toBe(1);
  });

  it("fires sales.revenue_below_floor for locations under the floor on the last full day, and stays quiet under a zero floor", async () => {
    clock.set(START);
    const runsOf = (floor: number) =>
      createRule(
        acme,
        { kind: "clone", key: `sales.floor.f${floor}`, name: "Floor", description: "", base_rule_key: "sales.revenue_below_floor", thresholds: { min_revenue: floor }, severity: "warning", default_channels: ["in_app"], cadence_cron: "0 6 * * *" },
        clock.now(),
      ).then(async (rule) => {
        await triggerRule(acme, rule.id, rt);
        await drainQueues(rt);
        return withTenant(acme, (tx) => tx.notificationRuleRun.findMany({ where: { ruleId: rule.id } }));
      });
    const [quiet] = await runsOf(0);
    expect(quiet.status).toBe("quiet");
    const [fired] = await runsOf(1e9);
    expect(fired.status).toBe("fired");
    const result = fired.result as { day: string; locations: { location_id: string; revenue: number }[] };
    expect(result.day).toBe(DAY_BEFORE);
    expect(result.locations.map((l) => l.location_id)).toEqual(["loc_acme_aus", "loc_acme_bos", "loc_acme_chi", "loc_acme_nyc", "loc_acme_sfo"]);
    // Figures come from the `revenue` KPI through the dashboard compiler; they match a plain sum of the day's orders.
    const { system } = await getDb();
    const direct = await system.query<{ location_id: string; revenue: number }>(
      "SELECT location_id, sum(amount)::float8 AS revenue FROM orders WHERE org_id = 'org_acme' AND order_date = $1 GROUP BY 1 ORDER BY 1",
      [DAY_BEFORE],
    );
    expect(direct.length).toBe(5);
    expect(result.locations.map((l) => [l.location_id, Math.round(l.revenue * 100)])).toEqual(direct.map((d) => [d.location_id, Math.round(d.revenue * 100)]));
  });

  it("does not follow a webhook's redirect (it could lead inward) and dead-letters the delivery", async () => {
    clock.set(START);
    await putChannelConfig(acme, "webhook", { enabled: true, config: { url: `${receiver.url}/moved`, signing_secret: SECRET } });
    receiver.state.failWith = (r) => (r.path === "/moved" ? 302 : null);
    const rule = await newRule(["webhook"]);
    const before = receiver.received.filter((r) => r.path === "/hook").length;
    await triggerRule(acme, rule.id, rt);
    await drainQueues(rt);
    receiver.state.failWith = () => null;
    await putChannelConfig(acme, "webhook", { enabled: true, config: { url: `${receiver.url}/hook` } });
    const [d] = await deliveriesOf(rule.id);
    expect(d).toMatchObject({ status: "dead", attempts: 1, reason: "permanent failure on attempt 1" });
    expect(d.lastError).toContain("HTTP 302");
    expect(receiver.received.filter((r) => r.path === "/hook").length).toBe(before);
  });

  it("checks the target again at send time: a stored URL that now points inward is refused, not called", async () => {
    clock.set(START);
    // As if the saved host had since started resolving to a private address: the row changes behind the PUT's back.
    const { system } = await getDb();
    await system.query(`UPDATE notification_channel_configs SET settings = jsonb_set(settings, '{url}', '"https://10.0.0.8/hook"') WHERE org_id = 'org_acme' AND kind = 'webhook'`);
    const rule = await newRule(["webhook"]);
    const before = receiver.received.length;
    await triggerRule(acme, rule.id, rt);
    await drainQueues(rt);
    await putChannelConfig(acme, "webhook", { enabled: true, config: { url: `${receiver.url}/hook` } });
    const [d] = await deliveriesOf(rule.id);
    expect(d).toMatchObject({ status: "dead", attempts: 1, reason: "permanent failure on attempt 1" });
    expect(d.lastError).toContain("private or reserved address (10.0.0.8)");
    expect(receiver.received.length).toBe(before);
  });

  it("records a delivery to an unconfigured channel as skipped with the reason", async () => {
    clock.set(START);
    const rule = await newRule(["slack"]);
    await putChannelConfig(acme, "slack", { enabled: false, config: { mode: "webhook" } });
    await triggerRule(acme, rule.id, rt);
    await drainQueues(rt);
    await putChannelConfig(acme, "slack", { enabled: true, config: { mode: "webhook" } });
    const [d] = await deliveriesOf(rule.id);
    expect(d).toMatchObject({ status: "skipped", reason: "channel not configured or disabled" });
  });
});

// Issue 32 §5: triggering a rule answered 202, and then nothing showed what happened.
describe("what a rule did", () => {
  it("shows its last run, what it delivered per channel and how many runs fired, through get and list", async () => {
    clock.set(START);
    const rule = await newRule(["webhook", "in_app"]);
    expect(rule).toMatchObject({ last_run: null, fired_runs: 0 });
    await triggerRule(acme, rule.id, rt);
    expect((await getRule(acme, rule.id, clock.now())).last_run).toMatchObject({ trigger: "manual", status: "queued", finished_at: null, deliveries: [] });
    await drainQueues(rt);
    const seen = await getRule(acme, rule.id, clock.now());
    expect(seen.fired_runs).toBe(1);
    expect(seen.last_run).toMatchObject({ trigger: "manual", status: "fired", error: null, finished_at: expect.any(String) });
    expect(seen.last_run!.deliveries).toEqual([
      { channel: "in_app", status: "delivered", count: expect.any(Number) },
      { channel: "webhook", status: "delivered", count: 1 },
    ]);
    const listed = (await listRules(acme, { limit: 200, offset: 0 }, clock.now())).items.find((r) => r.id === rule.id);
    expect(listed?.last_run).toEqual(seen.last_run);
  });

  it("shows the error of a failed evaluation", async () => {
    clock.set(START);
    const rule = await newRule(["in_app"]);
    await withTenant(acme, (tx) => tx.notificationRule.update({ where: { id: rule.id }, data: { baseRuleKey: "sales.retired" } }));
    await triggerRule(acme, rule.id, rt);
    await drainQueues(rt);
    const seen = await getRule(acme, rule.id, clock.now());
    expect(seen).toMatchObject({ fired_runs: 0, last_run: { status: "error", error: "Base rule sales.retired no longer exists", deliveries: [] } });
  });
});

// Issue 32 §4: offline, the demo could not show a single e-mail (SMTP needs a reachable host).
describe("the demo's e-mail and Slack outbox", () => {
  const globex: Principal = { userId: "usr_globex_admin", orgId: "org_globex", orgSlug: "globex", orgName: "Globex", role: "admin", locationIds: null, via: "bearer" };

  it("is seeded only where no such channel exists, keeps what the spec's example rule sends for the admin to read, and sends nothing", async () => {
    clock.set(START);
    // acme has an SMTP server and a Slack webhook (beforeAll); globex has neither.
    expect(await seedDemoOutbox(clock.now())).toBe(1);
    expect(await seedDemoOutbox(clock.now())).toBe(0);
    const email = (await listChannelConfigs(globex)).items.find((c) => c.kind === "email");
    expect(email).toMatchObject({ configured: true, enabled: true, config: { demo_outbox: true, from: "alerts@globex.test" } });
    expect((await listChannelConfigs(globex)).items.find((c) => c.kind === "slack")).toMatchObject({ configured: true, config: { demo_outbox: true, mode: "bot", channel: "#alerts" } });
    expect((await listChannelConfigs(acme)).items.find((c) => c.kind === "email")?.config).not.toHaveProperty("demo_outbox");

    const rule = await createRule(
      globex,
      { kind: "clone", key: "sales.gap_to_target.outbox", name: "Outbox", description: "", base_rule_key: "sales.gap_to_target", thresholds: { gap_pct: 0 }, severity: "warning", default_channels: ["in_app", "email", "slack"], cadence_cron: "0 0 1 1 *" },
      clock.now(),
    );
    const mails = smtp.received.length;
    const requests = receiver.received.length;
    await triggerRule(globex, rule.id, rt);
    await drainQueues(rt);
    expect(smtp.received.length).toBe(mails);
    expect(receiver.received.length).toBe(requests);
    const outbox = await listDemoOutbox(globex, { limit: 50, offset: 0 });
    expect(outbox.total).toBeGreaterThan(0);
    const mail = outbox.items.find((m) => m.channel === "email");
    expect(mail).toMatchObject({ status: "delivered", rule_key: rule.key, recipient: expect.stringMatching(/@/), subject: expect.any(String), body: expect.any(String) });
    expect(mail!.reason).toMatch(/^kept in the demo outbox on attempt 1/);
    expect(outbox.items.filter((m) => m.channel === "slack")).toEqual([expect.objectContaining({ status: "delivered", recipient: "#alerts", subject: mail!.subject })]);
    const emails = outbox.items.filter((m) => m.channel === "email").length;
    expect((await getRule(globex, rule.id, clock.now())).last_run?.deliveries).toEqual(
      expect.arrayContaining([{ channel: "email", status: "delivered", count: emails }, { channel: "slack", status: "delivered", count: 1 }]),
    );
    expect((await listDemoOutbox(acme, { limit: 50, offset: 0 })).total).toBe(0);

    const test = await testChannel(globex, "email", clock.now());
    expect(test).toMatchObject({ ok: false, detail: expect.stringMatching(/demo outbox sends nothing/) });
    expect(await testChannel(globex, "slack", clock.now())).toMatchObject({ ok: false, detail: expect.stringMatching(/demo outbox sends nothing/) });

    // An SMTP server replaces it for good.
    await putChannelConfig(globex, "email", { enabled: true, config: { host: "127.0.0.1", port: smtp.port, secure: false, from: "alerts@globex.test" } });
    expect((await listChannelConfigs(globex)).items.find((c) => c.kind === "email")?.config).not.toHaveProperty("demo_outbox");
    expect(await seedDemoOutbox(clock.now())).toBe(0);
  });
});
