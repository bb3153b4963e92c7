import "server-only";
import type { z } from "zod";
import type { Principal } from "@/lib/access/roles";
import { recordAudit } from "@/lib/audit/record";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import { pageBody, pageWindow, type PageQuery } from "@/lib/pagination";
import type { NotificationRule } from "@/lib/db/generated/client";
import { type ValidationItem, notFound, conflict, unprocessable, zodIssuesToItems } from "@/lib/errors";
import { BASE_RULES, findBaseRule, describeBaseRules } from "@/lib/notifications/settings/catalog";
import type { ChannelKind } from "@/lib/notifications/channel-kinds";
import { usableKinds } from "@/lib/notifications/settings/channels";
import type { CreateRuleBody, RuleRunView, RuleView, UpdateRuleBody } from "@/lib/notifications/contract";
import { cronError, nextRuns } from "@/lib/notifications/settings/cron";
import { newId } from "@/lib/ids";

export const listBaseRules = () => ({ items: describeBaseRules() });

/** What a rule did: its latest run with that run's deliveries per channel and outcome, and how many runs fired. */
export interface RuleActivity {
  lastRun: z.input<typeof RuleRunView> | null;
  firedRuns: number;
}

const NO_ACTIVITY: RuleActivity = { lastRun: null, firedRuns: 0 };

async function ruleActivity(tx: TenantTx, ruleIds: string[]): Promise<Map<string, RuleActivity>> {
  if (ruleIds.length === 0) return new Map();
  const [latest, fired] = await Promise.all([
    tx.notificationRuleRun.findMany({ where: { ruleId: { in: ruleIds } }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], distinct: ["ruleId"] }),
    tx.notificationRuleRun.groupBy({ by: ["ruleId"], where: { ruleId: { in: ruleIds }, status: "fired" }, _count: true }),
  ]);
  const deliveries =
    latest.length === 0
      ? []
      : await tx.notificationDelivery.groupBy({ by: ["runId", "channel", "status"], where: { runId: { in: latest.map((r) => r.id) } }, _count: true, orderBy: [{ runId: "asc" }, { channel: "asc" }, { status: "asc" }] });
  const firedBy = new Map(fired.map((f) => [f.ruleId, f._count]));
  const activity = new Map<string, RuleActivity>();
  for (const run of latest) {
    const result = run.result as { error?: unknown } | null;
    activity.set(run.ruleId, {
      firedRuns: firedBy.get(run.ruleId) ?? 0,
      lastRun: {
        id: run.id,
        trigger: run.trigger as "cron" | "manual",
        scheduled_for: run.scheduledFor.toISOString(),
        status: run.status as "queued" | "fired" | "quiet" | "error",
        finished_at: run.finishedAt?.toISOString() ?? null,
        error: run.status === "error" && typeof result?.error === "string" ? result.error : null,
        deliveries: deliveries.filter((d) => d.runId === run.id).map((d) => ({ channel: d.channel as ChannelKind, status: d.status, count: d._count })),
      },
    });
  }
  return activity;
}

function ruleView(rule: NotificationRule, now: Date, groupSubscriptions = 0, activity: RuleActivity = NO_ACTIVITY): z.input<typeof RuleView> {
  return {
    id: rule.id,
    kind: "clone",
    key: rule.key,
    name: rule.name,
    description: rule.description,
    base_rule_key: rule.baseRuleKey,
    thresholds: rule.thresholds as Record<string, number>,
    severity: rule.severity as "info" | "warning" | "critical",
    default_channels: rule.defaultChannels as ChannelKind[],
    cadence_cron: rule.cadenceCron,
    enabled: rule.enabled,
    next_runs: rule.enabled ? nextRuns(rule.cadenceCron, now).map((d) => d.toISOString()) : [],
    last_scheduled_for: rule.lastScheduledFor?.toISOString() ?? null,
    last_run: activity.lastRun,
    fired_runs: activity.firedRuns,
    group_subscriptions: groupSubscriptions,
    created_at: rule.createdAt.toISOString(),
    updated_at: rule.updatedAt.toISOString(),
  };
}

/** Thresholds parsed by the base rule's declared parameters (defaults filled in), or 422 items. */
function parseThresholds(baseRuleKey: string, thresholds: Record<string, unknown>): Record<string, number> {
  const base = findBaseRule(baseRuleKey);
  if (!base) throw notFound("Base rule");
  const parsed = base.params.safeParse(thresholds);
  if (!parsed.success) throw unprocessable(zodIssuesToItems("body", parsed.error).map((i) => ({ ...i, loc: ["body", "thresholds", ...i.loc.slice(1)] })));
  return parsed.data as Record<string, number>;
}

async function checkChannels(tx: TenantTx, channels: readonly ChannelKind[]): Promise<ValidationItem[]> {
  const usable = await usableKinds(tx);
  return channels
    .map((kind, index) => ({ kind, index }))
    .filter(({ kind }) => !usable.has(kind))
    .map(({ kind, index }) => ({ loc: ["body", "default_channels", index], msg: `Channel '${kind}' is not configured for this organization; configure it first (PUT /api/v1/notifications/admin/channel-configs/${kind})`, type: "channel_not_configured" }));
}

function checkCron(cron: string | undefined): ValidationItem[] {
  const error = cron === undefined ? null : cronError(cron);
  return error ? [{ loc: ["body", "cadence_cron"], msg: error, type: "cron_invalid" }] : [];
}

export async function createRule(principal: Principal, body: CreateRuleBody, now: Date) {
  const problems: ValidationItem[] = [...checkCron(body.cadence_cron)];
  if (!findBaseRule(body.base_rule_key)) {
    problems.push({ loc: ["body", "base_rule_key"], msg: `Unknown base rule; one of ${BASE_RULES.map((r) => r.key).join(", ")}`, type: "unknown_base_rule" });
  }
  if (findBaseRule(body.key)) problems.push({ loc: ["body", "key"], msg: "A custom rule cannot reuse a base rule's key", type: "key_reserved" });
  if (problems.length > 0) throw unprocessable(problems);
  const thresholds = parseThresholds(body.base_rule_key, body.thresholds);
  const rule = await withTenant(principal, async (tx) => {
    const channelProblems = await checkChannels(tx, body.default_channels);
    if (channelProblems.length > 0) throw unprocessable(channelProblems);
    if (await tx.notificationRule.findUnique({ where: { orgId_key: { orgId: principal.orgId, key: body.key } } })) {
      throw conflict(`A rule with key '${body.key}' already exists`);
    }
    const created = await tx.notificationRule.create({
      data: {
        id: newId("nrl"),
        orgId: principal.orgId,
        key: body.key,
        name: body.name,
        description: body.description,
        baseRuleKey: body.base_rule_key,
        thresholds,
        severity: body.severity,
        defaultChannels: body.default_channels,
        cadenceCron: body.cadence_cron.trim(),
        // Scheduling starts from creation: occurrences before it are not back-filled.
        lastScheduledFor: now,
        createdBy: principal.userId,
        createdAt: now,
        updatedAt: now,
      },
    });
    await recordAudit(tx, { actor: principal, action: "rule.create", target: { id: created.id, name: created.name }, after: ruleView(created, now) });
    return created;
  });
  return ruleView(rule, now);
}

export async function listRules(principal: Principal, page: PageQuery, now: Date) {
  const [rules, total, counts, activity] = await withTenant(principal, async (tx) => {
    const [rules, total, counts] = await Promise.all([
      tx.notificationRule.findMany({ orderBy: [{ key: "asc" }, { id: "asc" }], ...pageWindow(page) }),
      tx.notificationRule.count(),
      tx.notificationGroupSubscription.groupBy({ by: ["ruleId"], _count: true }),
    ]);
    return [rules, total, counts, await ruleActivity(tx, rules.map((r) => r.id))] as const;
  });
  const byRule = new Map(counts.map((c) => [c.ruleId, c._count]));
  return pageBody(
    rules.map((r) => ruleView(r, now, byRule.get(r.id) ?? 0, activity.get(r.id))),
    total,
    page,
  );
}

export async function getRule(principal: Principal, id: string, now: Date) {
  const [rule, subs, activity] = await withTenant(principal, (tx) =>
    Promise.all([tx.notificationRule.findUnique({ where: { id } }), tx.notificationGroupSubscription.count({ where: { ruleId: id } }), ruleActivity(tx, [id])]),
  );
  if (!rule) throw notFound("Rule");
  return ruleView(rule, now, subs, activity.get(id));
}

export async function updateRule(principal: Principal, id: string, body: UpdateRuleBody, now: Date) {
  const cronProblems = checkCron(body.cadence_cron);
  if (cronProblems.length > 0) throw unprocessable(cronProblems);
  const rule = await withTenant(principal, async (tx) => {
    const existing = await tx.notificationRule.findUnique({ where: { id } });
    if (!existing) throw notFound("Rule");
    const thresholds = body.thresholds ? parseThresholds(existing.baseRuleKey, body.thresholds) : undefined;
    if (body.default_channels) {
      const channelProblems = await checkChannels(tx, body.default_channels);
      if (channelProblems.length > 0) throw unprocessable(channelProblems);
    }
    const reenabled = body.enabled === true && !existing.enabled;
    const updated = await tx.notificationRule.update({
      where: { id },
      data: {
        name: body.name,
        description: body.description,
        thresholds,
        severity: body.severity,
        defaultChannels: body.default_channels,
        cadenceCron: body.cadence_cron?.trim(),
        enabled: body.enabled,
        // A re-enabled rule does not catch up on what it missed while disabled.
        lastScheduledFor: reenabled || body.cadence_cron ? now : undefined,
        updatedAt: now,
      },
    });
    await recordAudit(tx, { actor: principal, action: "rule.update", target: { id, name: updated.name }, before: ruleView(existing, now), after: ruleView(updated, now) });
    return updated;
  });
  return getRule(principal, rule.id, now);
}
