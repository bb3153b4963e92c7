import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "@/lib/access/roles";
import { withTenant } from "@/lib/db/tenant";
import { testChannel } from "@/lib/notifications/admin/channel-test";
import { putChannelConfig } from "@/lib/notifications/admin/channels";
import { manualClock } from "@/lib/notifications/clock";
import { triggerRule } from "@/lib/notifications/admin/trigger-rule";
import { type Runtime } from "@/lib/notifications/pipeline/runtime";
import { closeQueue, getQueue } from "@/lib/job-queue";
import { createRule } from "@/lib/notifications/admin/rules";
import { startReceiver } from "@/test/support/notification-servers";
import { drainQueues } from "@/lib/worker";

// The loopback receiver stands in for the Slack Web API. Its URL is known only once it listens; the
// configuration is read on first use, which comes after this.
const receiver = await startReceiver();
process.env.NOTIFICATIONS_CONFIG = JSON.stringify({ url_allow_list: ["127.0.0.1"], in_process_worker: false, slack_api_url: `${receiver.url}/api/` });

const acme: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "bearer" };
const TOKEN = "xoxb-0000-test-token-abcdef";
const clock = manualClock(new Date("2025-06-10T09:00:00Z"));
let rt: Runtime & { queue: Awaited<ReturnType<typeof getQueue>> };

beforeAll(async () => {
  rt = { clock, queue: await getQueue(false) };
  await putChannelConfig(acme, "slack", { enabled: true, config: { mode: "bot", bot_token: TOKEN, channel: "#alerts" } });
});

afterAll(async () => {
  await closeQueue();
  await receiver.close();
});

let seq = 0;
async function fire() {
  seq += 1;
  const rule = await createRule(
    acme,
    { kind: "clone", key: `sales.slack.s${seq}`, name: "Slack", description: "", base_rule_key: "sales.gap_to_target", thresholds: { gap_pct: 0 }, severity: "critical", default_channels: ["slack"], cadence_cron: "0 8 * * *" },
    clock.now(),
  );
  await triggerRule(acme, rule.id, rt);
  await drainQueues(rt);
  return withTenant(acme, (tx) => tx.notificationDelivery.findFirstOrThrow({ where: { ruleId: rule.id } }));
}

const posts = (from: number) => receiver.received.slice(from).filter((r) => r.path === "/api/chat.postMessage");

describe("Slack in bot mode (@slack/web-api against a loopback API)", () => {
  it("sends the test message with the bot token to the configured channel", async () => {
    const before = receiver.received.length;
    const result = await testChannel(acme, "slack", clock.now());
    expect(result).toMatchObject({ ok: true, recipient: "#alerts" });
    const [post] = posts(before);
    expect(post.headers.authorization).toBe(`Bearer ${TOKEN}`);
    const form = new URLSearchParams(post.body);
    expect(form.get("channel")).toBe("#alerts");
    expect(form.get("text")).toContain("Quarry test message");
  });

  it("delivers a fired rule to the channel", async () => {
    const before = receiver.received.length;
    const d = await fire();
    expect(d).toMatchObject({ status: "delivered", recipient: "#alerts", attempts: 1 });
    expect(new URLSearchParams(posts(before)[0].body).get("text")).toMatch(/^\*\[CRITICAL\] .*behind target/);
  });

  it("dead-letters a platform error (channel_not_found) at once, and retries an HTTP 503", async () => {
    receiver.state.apiReply = () => ({ ok: false, error: "channel_not_found" });
    const refused = await fire();
    receiver.state.apiReply = () => ({ ok: true, channel: "C1", ts: "1.0" });
    expect(refused).toMatchObject({ status: "dead", attempts: 1, reason: "permanent failure on attempt 1" });
    expect(refused.lastError).toContain("channel_not_found");

    receiver.state.failWith = (r) => (r.path.startsWith("/api/") ? 503 : null);
    const down = await fire();
    receiver.state.failWith = () => null;
    expect(down).toMatchObject({ status: "retrying", attempts: 1 });
    expect(down.lastError).toContain("503");
  });
});
