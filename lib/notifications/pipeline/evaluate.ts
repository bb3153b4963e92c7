import "server-only";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import type { NotificationRule } from "@/lib/db/generated/client";
import { log } from "@/lib/log";
import { usableKinds } from "@/lib/notifications/settings/channels";
import { loadOptOuts, type OptOuts } from "@/lib/notifications/settings/opt-outs";
import { ChannelKind } from "@/lib/notifications/channel-kinds";
import { findBaseRule, type Finding } from "@/lib/notifications/settings/catalog";
import { CHANNEL_UNUSABLE, channelRecipient, fanOut, leftGroupsReason, type DeliveryTarget } from "@/lib/notifications/pipeline/fan-out";
import type { EvaluateJob, Runtime } from "@/lib/notifications/pipeline/runtime";

async function targetsFor(tx: TenantTx, rule: NotificationRule): Promise<DeliveryTarget[]> {
  const [usable, optOuts] = await Promise.all([usableKinds(tx), loadOptOuts(tx)]);
  const targets: DeliveryTarget[] = [];
  const admins = await tx.user.findMany({ where: { role: "admin" }, select: { id: true, email: true }, orderBy: { id: "asc" } });
  for (const channel of rule.defaultChannels.map((c) => ChannelKind.parse(c))) {
    if (!usable.has(channel)) {
      targets.push({ channel, recipient: "-", skipReason: CHANNEL_UNUSABLE });
      continue;
    }
    if (channel === "in_app") {
      for (const a of admins) targets.push({ channel, recipient: a.id, skipReason: optOuts.fromRule(rule.id, { userId: a.id, address: a.email }) ?? undefined });
    }
    if (channel === "email") targets.push(...(await emailTargets(tx, rule, admins, optOuts)));
    if (channel === "slack" || channel === "webhook") targets.push({ channel, recipient: await channelRecipient(tx, rule.orgId, channel) });
  }
  return targets;
}

/**
 * Email recipients: the admins and the members of the rule's groups, once per
 * address. An address opted out of the rule (or of everything) is skipped; one
 * that left a group still hears through its other groups or as an admin.
 */
async function emailTargets(tx: TenantTx, rule: NotificationRule, admins: { id: string; email: string }[], optOuts: OptOuts): Promise<DeliveryTarget[]> {
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
      return { channel: "email" as const, recipient: address, skipReason: leftGroupsReason(left.map((g) => g.name)) };
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
  await fanOut(rt, job.orgId, now, async (tx) => {
    // Claiming the run makes a second evaluation of the same run (a redelivered job) fan out nothing.
    const claimed = await tx.notificationRuleRun.updateMany({
      where: { id: run.id, status: "queued" },
      data: { status: finding ? "fired" : "quiet", result: (finding?.values ?? {}) as object, finishedAt: now },
    });
    if (claimed.count === 0 || !finding) return null;
    return {
      origin: { runId: run.id, ruleId: rule.id },
      subject: finding.subject,
      body: finding.body,
      severity: rule.severity,
      dedupeKey: `${rule.id}:${finding.fingerprint}`,
      targets: await targetsFor(tx, rule),
    };
  });
}
