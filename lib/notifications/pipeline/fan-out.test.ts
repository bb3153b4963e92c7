import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "@/lib/access/roles";
import { withTenant } from "@/lib/db/tenant";
import { closeQueue, getQueue } from "@/lib/job-queue";
import { createRule } from "@/lib/notifications/admin/rules";
import { manualClock } from "@/lib/notifications/clock";
import { fanOut, type FanOut } from "@/lib/notifications/pipeline/fan-out";
import { RULE_RUNS, insertRun, type Runtime } from "@/lib/notifications/pipeline/runtime";
import { drainQueues } from "@/lib/worker";

process.env.NOTIFICATIONS_CONFIG = JSON.stringify({ in_process_worker: false, dedupe_window_minutes: 60 });

const acme: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "bearer" };
const START = new Date("2025-06-10T09:00:00Z");
const clock = manualClock(START);
let rt: Runtime & { queue: Awaited<ReturnType<typeof getQueue>> };

beforeAll(async () => {
  rt = { clock, queue: await getQueue(false) };
});

afterAll(async () => {
  await closeQueue();
});

let seq = 0;
/** A rule and one run of it at `at`, for deliveries to belong to. */
async function ruleRun(at: Date) {
  seq += 1;
  const rule = await createRule(
    acme,
    { kind: "clone", key: `fan_out.t${seq}`, name: `Fan-out ${seq}`, description: "", base_rule_key: "sales.gap_to_target", thresholds: { gap_pct: 0 }, severity: "warning", default_channels: ["in_app"], cadence_cron: "0 * * * *" },
    at,
  );
  const runId = await withTenant(acme, (tx) => insertRun(tx, RULE_RUNS, acme.orgId, rule.id, at, "manual"));
  if (!runId) throw new Error("run not recorded");
  return { ruleId: rule.id, runId };
}

const deliveriesOf = (runId: string) => withTenant(acme, (tx) => tx.notificationDelivery.findMany({ where: { runId }, orderBy: [{ channel: "asc" }, { recipient: "asc" }] }));

const fanOutOf = (origin: { runId: string; ruleId: string }, subject: string): FanOut => ({
  origin,
  subject,
  body: "Two locations are behind target.",
  severity: "warning",
  dedupeKey: `${origin.ruleId}:same-finding`,
  targets: [
    { channel: "in_app", recipient: acme.userId },
    { channel: "email", recipient: "left@acme.test", skipReason: "recipient unsubscribed from this rule" },
  ],
});

describe("fanOut", () => {
  it("records every target (skipped ones with their reason), queues the rest, and a queued one is delivered", async () => {
    const origin = await ruleRun(START);
    const queued = await fanOut(rt, acme.orgId, START, async () => fanOutOf(origin, "Behind target"));
    expect(queued).toBe(1);
    const rows = await deliveriesOf(origin.runId);
    expect(rows.map((r) => [r.channel, r.recipient, r.status, r.reason])).toEqual([
      ["email", "left@acme.test", "skipped", "recipient unsubscribed from this rule"],
      ["in_app", acme.userId, "pending", "queued"],
    ]);
    expect(rows.every((r) => r.ruleId === origin.ruleId && r.body === "Two locations are behind target." && r.severity === "warning")).toBe(true);
    await drainQueues(rt);
    expect((await deliveriesOf(origin.runId)).find((r) => r.channel === "in_app")?.status).toBe("delivered");
  });

  // Twins disagreed: report runs wrote their subject as one clean line, rule runs as the finding gave it.
  it("stores the subject of every fan-out as one line without control characters", async () => {
    const origin = await ruleRun(new Date(START.getTime() + 60_000));
    await fanOut(rt, acme.orgId, START, async () => fanOutOf(origin, "Behind\r\nBcc: someone@evil.test\u0007target"));
    const subjects = new Set((await deliveriesOf(origin.runId)).map((r) => r.subject));
    expect([...subjects]).toEqual(["Behind Bcc: someone@evil.test target"]);
  });

  it("skips a target that was sent the same key within the dedupe window, but not one that was skipped", async () => {
    const first = await ruleRun(new Date(START.getTime() + 2 * 60_000));
    const later = new Date(START.getTime() + 30 * 60_000);
    await fanOut(rt, acme.orgId, START, async () => fanOutOf(first, "Behind target"));
    const second = await ruleRun(later);
    const queued = await fanOut(rt, acme.orgId, later, async () => ({ ...fanOutOf(first, "Behind target"), origin: second, targets: [{ channel: "in_app", recipient: acme.userId }, { channel: "email", recipient: "left@acme.test" }] }));
    const rows = await deliveriesOf(second.runId);
    expect(rows.map((r) => [r.channel, r.status, r.reason])).toEqual([
      ["email", "pending", "queued"],
      ["in_app", "skipped", "deduplicated: the same finding was sent within 60 min"],
    ]);
    expect(queued).toBe(1);
  });

  it("writes and queues nothing when the claim answers null (the run was already claimed)", async () => {
    const origin = await ruleRun(new Date(START.getTime() + 3 * 60_000));
    expect(await fanOut(rt, acme.orgId, START, async () => null)).toBe(0);
    expect(await deliveriesOf(origin.runId)).toEqual([]);
  });
});

describe("insertRun", () => {
  it("records one run per owner and occurrence", async () => {
    const { ruleId } = await ruleRun(new Date(START.getTime() + 4 * 60_000));
    const at = new Date(START.getTime() + 5 * 60_000);
    const [a, b] = await withTenant(acme, async (tx) => [await insertRun(tx, RULE_RUNS, acme.orgId, ruleId, at, "cron"), await insertRun(tx, RULE_RUNS, acme.orgId, ruleId, at, "manual")]);
    expect(a).toMatch(/^nrn_/);
    expect(b).toBeNull();
  });

  it("refuses a table or column that is not a plain identifier", async () => {
    const { ruleId } = await ruleRun(new Date(START.getTime() + 6 * 60_000));
    await expect(withTenant(acme, (tx) => insertRun(tx, { table: "notification_rule_runs; DROP TABLE x", ownerColumn: "rule_id", idPrefix: "nrn" }, acme.orgId, ruleId, START, "cron"))).rejects.toThrow(/Not a run table/);
  });
});
