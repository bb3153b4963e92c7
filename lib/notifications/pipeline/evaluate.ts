import "server-only";
import { notificationsConfig } from "@/lib/config/notifications";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import type { NotificationRule } from "@/lib/db/generated/client";
import { log } from "@/lib/log";
import { resolveChannel, usableKinds } from "@/lib/notifications/settings/channels";
import { loadOptOuts, type OptOuts } from "@/lib/notifications/settings/opt-outs";
import { loadQuietHours, quietOutcome } from "@/lib/notifications/settings/quiet-hours";
import { ChannelKind } from "@/lib/notifications/channel-kinds";
import { newId } from "@/lib/ids";
import { findBaseRule, type Finding } from "@/lib/notifications/settings/catalog";
import { QUEUES } from "@/lib/job-queue";
import type { DeliverJob, EvaluateJob, Runtime } from "@/lib/notifications/pipeline/runtime";

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
    return pendingOf(rows);
  });
  await enqueueDeliveries(rt, job.orgId, pending, now);
}

/** The rows just written that wait for delivery, with when their first attempt may start. */
export function pendingOf(rows: readonly { id: string; status: string; nextAttemptAt: Date | null }[]): { id: string; startAfter: Date | null }[] {
  return rows.filter((r) => r.status === "pending").map((r) => ({ id: r.id, startAfter: r.nextAttemptAt }));
}

/** Sends each pending delivery's first attempt to the deliver queue, deferred to its start (quiet hours). */
export async function enqueueDeliveries(rt: Runtime, orgId: string, pending: readonly { id: string; startAfter: Date | null }[], now: Date): Promise<void> {
  for (const d of pending) {
    const later = d.startAfter && d.startAfter > now ? { startAfter: d.startAfter } : undefined;
    await rt.queue.send(QUEUES.deliver, { orgId, deliveryId: d.id, attempt: 1 } satisfies DeliverJob, later);
  }
}
