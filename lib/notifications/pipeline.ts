import "server-only";
import type { Principal } from "@/lib/auth/roles";
import { conflict, notFound } from "@/lib/api/errors";
import { notificationsConfig } from "@/lib/config/notifications";
import { getDb } from "@/lib/db/client";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import type { NotificationDelivery, NotificationRule } from "@/lib/db/generated/client";
import { log } from "@/lib/log";
import { findBaseRule, type Finding } from "./catalog";
import { ChannelKind } from "./channel-kinds";
import { resolveChannel, usableKinds } from "./channels";
import { deliveryView } from "./health";
import type { Clock } from "./clock";
import { latestDue } from "./cron";
import { newId } from "./ids";
import { loadQuietHours, quietUntil, windowFor, type QuietHoursPolicy } from "./quiet-hours";
import { QUEUES, deliveryLeaseSeconds, type JobQueue } from "./queue";
import { SendError, sendExternal } from "./transports";
import { loadOptOuts, type OptOuts } from "./unsubscribes";

/** The pipeline's outside world: a clock and a queue, both injectable. */
export interface Runtime {
  clock: Clock;
  queue: JobQueue;
}

export interface EvaluateJob {
  orgId: string;
  runId: string;
}
export interface DeliverJob {
  orgId: string;
  deliveryId: string;
  /** The attempt this job is for (1-based); a job for an attempt already made is stale and ignored. */
  attempt: number;
}

/** Deliveries or runs whose job should have run this long ago are re-queued by the tick (a crash between commit and enqueue). */
const STRANDED_MS = 10 * 60_000;

/** Organizations with rules to schedule; the queue runs outside any tenant, so it reads the registry with the connecting role. */
async function organizationIds(): Promise<string[]> {
  const { system } = await getDb();
  return (await system.query<{ id: string }>("SELECT id FROM organizations ORDER BY id")).map((r) => r.id);
}

/**
 * One scheduler tick (pg-boss runs it every minute): for every enabled rule
 * whose cron has an occurrence since the last one scheduled, record a run for
 * that occurrence and queue its evaluation. Missed occurrences collapse into
 * the latest. The unique (rule, occurrence) key makes concurrent ticks on
 * several workers queue each occurrence once.
 */
export async function tick(rt: Runtime): Promise<{ queued: number; recovered: number }> {
  const now = rt.clock.now();
  let queued = 0;
  let recovered = 0;
  for (const orgId of await organizationIds()) {
    const { runs, stranded } = await withTenant({ orgId }, async (tx) => {
      const rules = await tx.notificationRule.findMany({ where: { enabled: true } });
      const created: string[] = [];
      for (const rule of rules) {
        const due = latestDue(rule.cadenceCron, now, rule.lastScheduledFor ?? rule.createdAt);
        if (!due) continue;
        const id = await insertRun(tx, orgId, rule.id, due, "cron");
        await tx.notificationRule.update({ where: { id: rule.id }, data: { lastScheduledFor: due } });
        if (id) created.push(id);
      }
      return { runs: created, stranded: await strandedWork(tx, now) };
    });
    for (const runId of runs) await rt.queue.send(QUEUES.evaluate, { orgId, runId } satisfies EvaluateJob);
    for (const runId of stranded.runs) await rt.queue.send(QUEUES.evaluate, { orgId, runId } satisfies EvaluateJob);
    for (const d of stranded.deliveries) await rt.queue.send(QUEUES.deliver, { orgId, deliveryId: d.id, attempt: d.attempts + 1 } satisfies DeliverJob);
    queued += runs.length;
    recovered += stranded.runs.length + stranded.deliveries.length;
  }
  return { queued, recovered };
}

async function insertRun(tx: TenantTx, orgId: string, ruleId: string, scheduledFor: Date, trigger: "cron" | "manual"): Promise<string | null> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO notification_rule_runs (id, org_id, rule_id, scheduled_for, trigger, created_at)
    VALUES (${newId("nrn")}, ${orgId}, ${ruleId}, ${scheduledFor}, ${trigger}, ${scheduledFor})
    ON CONFLICT (rule_id, scheduled_for) DO NOTHING RETURNING id`;
  return rows[0]?.id ?? null;
}

async function strandedWork(tx: TenantTx, now: Date) {
  const cutoff = new Date(now.getTime() - STRANDED_MS);
  const runs = await tx.notificationRuleRun.findMany({ where: { status: "queued", createdAt: { lt: cutoff, gt: new Date(now.getTime() - 86_400_000) } }, select: { id: true } });
  const deliveries = await tx.notificationDelivery.findMany({
    where: {
      OR: [
        { status: { in: ["pending", "retrying"] }, nextAttemptAt: { lt: cutoff } },
        { status: "sending", updatedAt: { lt: cutoff }, nextAttemptAt: { lt: cutoff } },
      ],
    },
    select: { id: true, attempts: true },
  });
  if (deliveries.length > 0) await tx.notificationDelivery.updateMany({ where: { id: { in: deliveries.map((d) => d.id) } }, data: { nextAttemptAt: now } });
  return { runs: runs.map((r) => r.id), deliveries };
}

/** Manual trigger (rate limited at the route): one run now, outside the cadence. */
export async function triggerRule(principal: Principal, ruleId: string, rt: Runtime) {
  const now = rt.clock.now();
  const run = await withTenant(principal, async (tx) => {
    const rule = await tx.notificationRule.findUnique({ where: { id: ruleId } });
    if (!rule) throw notFound("Rule");
    if (!rule.enabled) throw conflict("The rule is disabled; enable it before triggering it");
    const id = await insertRun(tx, principal.orgId, rule.id, now, "manual");
    if (!id) throw conflict("The rule was already triggered at this instant");
    return tx.notificationRuleRun.findUniqueOrThrow({ where: { id } });
  });
  await rt.queue.send(QUEUES.evaluate, { orgId: principal.orgId, runId: run.id } satisfies EvaluateJob);
  return { id: run.id, rule_id: run.ruleId, scheduled_for: run.scheduledFor, trigger: run.trigger, status: run.status };
}

interface Target {
  channel: ChannelKind;
  recipient: string;
  skipReason?: string;
}

async function targetsFor(tx: TenantTx, rule: NotificationRule): Promise<Target[]> {
  const [usable, optOuts] = await Promise.all([usableKinds(tx), loadOptOuts(tx)]);
  const targets: Target[] = [];
  const admins = await tx.user.findMany({ where: { role: "admin" }, select: { id: true, email: true }, orderBy: { id: "asc" } });
  for (const channel of rule.defaultChannels.map((c) => ChannelKind.parse(c))) {
    if (!usable.has(channel)) {
      targets.push({ channel, recipient: "-", skipReason: "channel not configured or disabled" });
      continue;
    }
    if (channel === "in_app") {
      for (const a of admins) targets.push({ channel, recipient: a.id, skipReason: optOuts.fromRule(rule.id, { userId: a.id, address: a.email }) ?? undefined });
    }
    if (channel === "email") targets.push(...(await emailTargets(tx, rule, admins, optOuts)));
    if (channel === "slack") {
      const resolved = await resolveChannel(tx, rule.orgId, "slack");
      targets.push({ channel, recipient: resolved?.settings.mode === "bot" ? String(resolved.settings.channel) : "slack-webhook" });
    }
    if (channel === "webhook") {
      const resolved = await resolveChannel(tx, rule.orgId, "webhook");
      targets.push({ channel, recipient: new URL(String(resolved?.settings.url)).host });
    }
  }
  return targets;
}

/**
 * Email recipients: the admins and the members of the rule's groups, once per
 * address. An address opted out of the rule (or of everything) is skipped; one
 * that left a group still hears through its other groups or as an admin.
 */
async function emailTargets(tx: TenantTx, rule: NotificationRule, admins: { id: string; email: string }[], optOuts: OptOuts): Promise<Target[]> {
  const groups = await tx.notificationGroupSubscription.findMany({ where: { ruleId: rule.id }, orderBy: { groupName: "asc" } });
  const sources = new Map<string, { userId?: string; groups: { id: string; name: string }[] }>();
  for (const a of admins) sources.set(a.email.toLowerCase(), { userId: a.id, groups: [] });
  for (const g of groups) {
    for (const member of g.members) {
      const entry = sources.get(member) ?? { groups: [] };
      entry.groups.push({ id: g.id, name: g.groupName });
      sources.set(member, entry);
    }
  }
  return [...sources.keys()].sort().map((address) => {
    const source = sources.get(address) ?? { groups: [] };
    const optedOut = optOuts.fromRule(rule.id, { userId: source.userId, address });
    if (optedOut) return { channel: "email" as const, recipient: address, skipReason: optedOut };
    const left = source.groups.filter((g) => optOuts.leftGroup(g.id, address));
    if (!source.userId && left.length === source.groups.length) {
      return { channel: "email" as const, recipient: address, skipReason: `recipient unsubscribed from group ${left.map((g) => `'${g.name}'`).join(", ")}` };
    }
    return { channel: "email" as const, recipient: address };
  });
}

/** What quiet hours make of a delivery created at `now`: nothing, a later start, or a skip. */
function quietOutcome(policy: QuietHoursPolicy, channel: ChannelKind, now: Date): { skip: string } | { deferTo: Date; reason: string } | null {
  const window = windowFor(policy, channel);
  const until = window ? quietUntil(window, now, policy.timeZone) : null;
  if (!window || !until) return null;
  const label = `quiet hours ${window.start}–${window.end} ${policy.timeZone}`;
  return window.action === "skip" ? { skip: label } : { deferTo: until, reason: `deferred by ${label}; sends at ${until.toISOString()}` };
}

/**
 * Evaluates one run (a pg-boss job): the base rule's SQL in a read-only
 * transaction as of the occurrence time, then, if it fired, one delivery per
 * channel and recipient. Deliveries repeating a finding already sent inside
 * the dedupe window are recorded as skipped.
 */
export async function evaluateRun(rt: Runtime, job: EvaluateJob): Promise<void> {
  const scope = { orgId: job.orgId };
  const loaded = await withTenant(scope, async (tx) => {
    const run = await tx.notificationRuleRun.findUnique({ where: { id: job.runId } });
    if (!run || run.status !== "queued") return null;
    const rule = await tx.notificationRule.findUnique({ where: { id: run.ruleId } });
    return rule ? { run, rule } : null;
  });
  if (!loaded) return;
  const { run, rule } = loaded;
  const base = findBaseRule(rule.baseRuleKey);
  let finding: Finding | null;
  try {
    if (!base) throw new Error(`Base rule ${rule.baseRuleKey} no longer exists`);
    const params = base.params.parse(rule.thresholds);
    finding = await withTenant(scope, (tx) => base.evaluate(tx, params, run.scheduledFor), { role: base.role, readOnly: true, statementTimeoutMs: 20_000 });
  } catch (error) {
    log.warn("rule evaluation failed", { orgId: job.orgId, runId: run.id, error: (error as Error).message });
    await withTenant(scope, (tx) =>
      tx.notificationRuleRun.updateMany({ where: { id: run.id, status: "queued" }, data: { status: "error", result: { error: (error as Error).message }, finishedAt: rt.clock.now() } }),
    );
    return;
  }
  const now = rt.clock.now();
  const pending = await withTenant(scope, async (tx) => {
    // Claiming the run makes a second evaluation of the same run (a redelivered job) fan out nothing.
    const claimed = await tx.notificationRuleRun.updateMany({
      where: { id: run.id, status: "queued" },
      data: { status: finding ? "fired" : "quiet", result: (finding?.values ?? {}) as object, finishedAt: now },
    });
    if (claimed.count === 0 || !finding) return [];
    const cfg = notificationsConfig();
    const dedupeKey = `${rule.id}:${finding.fingerprint}`;
    const since = new Date(now.getTime() - cfg.dedupe_window_minutes * 60_000);
    const recent = await tx.notificationDelivery.findMany({
      where: { dedupeKey, createdAt: { gte: since }, status: { in: ["pending", "sending", "retrying", "delivered"] } },
      select: { channel: true, recipient: true },
    });
    const seen = new Set(recent.map((d) => `${d.channel} ${d.recipient}`));
    const quiet = await loadQuietHours(tx);
    const rows = (await targetsFor(tx, rule)).map((t) => {
      const duplicate = !t.skipReason && seen.has(`${t.channel} ${t.recipient}`);
      const quietly = t.skipReason || duplicate ? null : quietOutcome(quiet, t.channel, now);
      const skipReason = t.skipReason ?? (duplicate ? `deduplicated: the same finding was sent within ${cfg.dedupe_window_minutes} min` : quietly && "skip" in quietly ? quietly.skip : undefined);
      const deferTo = quietly && "deferTo" in quietly ? quietly : null;
      return {
        id: newId("ndl"),
        orgId: rule.orgId,
        runId: run.id,
        ruleId: rule.id,
        channel: t.channel,
        recipient: t.recipient,
        status: skipReason ? "skipped" : "pending",
        reason: skipReason ?? deferTo?.reason ?? "queued",
        subject: finding.subject,
        body: finding.body,
        severity: rule.severity,
        dedupeKey,
        maxAttempts: cfg.max_attempts,
        nextAttemptAt: skipReason ? null : (deferTo?.deferTo ?? now),
        createdAt: now,
        updatedAt: now,
      };
    });
    await tx.notificationDelivery.createMany({ data: rows, skipDuplicates: true });
    return rows.filter((r) => r.status === "pending").map((r) => ({ id: r.id, startAfter: r.nextAttemptAt }));
  });
  for (const d of pending) {
    const later = d.startAfter && d.startAfter > now ? { startAfter: d.startAfter } : undefined;
    await rt.queue.send(QUEUES.deliver, { orgId: job.orgId, deliveryId: d.id, attempt: 1 } satisfies DeliverJob, later);
  }
}

export function backoffMs(failedAttempts: number): number {
  const cfg = notificationsConfig();
  return Math.min(cfg.backoff_max_seconds, cfg.backoff_base_seconds * 2 ** (failedAttempts - 1)) * 1000;
}

/**
 * One delivery attempt (a pg-boss job). The delivery is claimed first (only
 * one worker sends an attempt; a crashed worker's claim lapses after the job's
 * expiry), sent outside any transaction, then recorded: delivered, retried
 * later with exponential backoff, or dead-lettered with the last error.
 */
export async function deliver(rt: Runtime, job: DeliverJob): Promise<"done" | "deferred"> {
  const scope = { orgId: job.orgId };
  const now = rt.clock.now();
  let notBefore: Date | null = null;
  const claim = await withTenant(scope, async (tx) => {
    const d = await tx.notificationDelivery.findUnique({ where: { id: job.deliveryId } });
    if (!d || d.attempts !== job.attempt - 1) return null;
    // Handed out before its time (the queue runs on the database clock, the backoff on ours): put it back.
    if ((d.status === "pending" || d.status === "retrying") && d.nextAttemptAt && d.nextAttemptAt > now) {
      notBefore = d.nextAttemptAt;
      return null;
    }
    const lapsed = d.status === "sending" && now.getTime() - d.updatedAt.getTime() >= deliveryLeaseSeconds() * 1000;
    if (d.status !== "pending" && d.status !== "retrying" && !lapsed) return null;
    const taken = await tx.notificationDelivery.updateMany({ where: { id: d.id, status: d.status, updatedAt: d.updatedAt }, data: { status: "sending", updatedAt: now } });
    if (taken.count === 0) return null;
    const kind = ChannelKind.parse(d.channel);
    const channel = await resolveChannel(tx, job.orgId, kind);
    if (!channel || !channel.enabled) {
      await finish(tx, d, { status: "skipped", reason: "channel not configured or disabled", attempts: d.attempts }, now);
      return null;
    }
    if (kind === "in_app") {
      await tx.notificationInboxItem.create({
        data: { id: newId("nib"), orgId: job.orgId, userId: d.recipient, deliveryId: d.id, title: d.subject, body: d.body, severity: d.severity, createdAt: now },
      });
      await finish(tx, d, { status: "delivered", reason: `delivered to the in-app inbox on attempt ${job.attempt}`, attempts: job.attempt, deliveredAt: now }, now);
      return null;
    }
    const rule = await tx.notificationRule.findUnique({ where: { id: d.ruleId }, select: { key: true } });
    return { d, channel, ruleKey: rule?.key ?? "" };
  });
  if (notBefore) {
    await rt.queue.send(QUEUES.deliver, job, { startAfter: notBefore });
    return "deferred";
  }
  if (!claim) return "done";
  const { d, channel, ruleKey } = claim;
  let failure: SendError | null = null;
  try {
    await sendExternal(channel, { id: d.id, recipient: d.recipient, subject: d.subject, body: d.body, severity: d.severity, ruleKey, sentAt: now });
  } catch (error) {
    failure = error instanceof SendError ? error : new SendError(String(error), true);
  }
  const done = rt.clock.now();
  const retryAt = failure?.transient && job.attempt < d.maxAttempts ? new Date(done.getTime() + backoffMs(job.attempt)) : null;
  await withTenant(scope, (tx) => {
    if (!failure) return finish(tx, d, { status: "delivered", reason: `delivered on attempt ${job.attempt}`, attempts: job.attempt, deliveredAt: done }, done);
    if (retryAt) {
      return finish(tx, d, { status: "retrying", reason: `attempt ${job.attempt} of ${d.maxAttempts} failed; retrying at ${retryAt.toISOString()}`, attempts: job.attempt, lastError: failure.message, nextAttemptAt: retryAt }, done);
    }
    const reason = failure.transient ? `failed after ${job.attempt} attempts` : `permanent failure on attempt ${job.attempt}`;
    return finish(tx, d, { status: "dead", reason, attempts: job.attempt, lastError: failure.message }, done);
  });
  if (retryAt) await rt.queue.send(QUEUES.deliver, { orgId: job.orgId, deliveryId: d.id, attempt: job.attempt + 1 } satisfies DeliverJob, { startAfter: retryAt });
  return "done";
}

async function finish(
  tx: TenantTx,
  d: NotificationDelivery,
  outcome: { status: string; reason: string; attempts: number; lastError?: string; nextAttemptAt?: Date; deliveredAt?: Date },
  now: Date,
) {
  await tx.notificationDelivery.update({
    where: { id: d.id },
    data: {
      status: outcome.status,
      reason: outcome.reason,
      attempts: outcome.attempts,
      lastError: outcome.lastError ?? d.lastError,
      nextAttemptAt: outcome.nextAttemptAt ?? null,
      deliveredAt: outcome.deliveredAt ?? null,
      updatedAt: now,
    },
  });
}

/** Gives a dead letter a fresh round of attempts. */
export async function requeueDeadLetter(principal: Principal, id: string, rt: Runtime) {
  const now = rt.clock.now();
  const d = await withTenant(principal, async (tx) => {
    const existing = await tx.notificationDelivery.findUnique({ where: { id } });
    if (!existing) throw notFound("Delivery");
    if (existing.status !== "dead") throw conflict(`Only dead letters can be requeued; this delivery is ${existing.status}`);
    const rule = await tx.notificationRule.findUnique({ where: { id: existing.ruleId }, select: { key: true } });
    const updated = await tx.notificationDelivery.update({
      where: { id },
      data: { status: "pending", attempts: 0, maxAttempts: notificationsConfig().max_attempts, nextAttemptAt: now, reason: `requeued by ${principal.userId}`, updatedAt: now },
    });
    return deliveryView(updated, rule?.key ?? "");
  });
  await rt.queue.send(QUEUES.deliver, { orgId: principal.orgId, deliveryId: d.id, attempt: 1 } satisfies DeliverJob);
  return d;
}
