import "server-only";
import type { z } from "zod";
import type { Principal } from "@/lib/auth/roles";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import { pageBody, pageWindow, type PageQuery } from "@/lib/pagination";
import type { NotificationRule } from "@/lib/db/generated/client";
import { type ValidationItem, notFound, conflict, unprocessable, zodIssuesToItems } from "@/lib/errors";
import { BASE_RULES, findBaseRule, describeBaseRules } from "@/lib/notifications/pipeline/catalog";
import type { ChannelKind } from "@/lib/notifications/channel-kinds";
import { usableKinds } from "@/lib/notifications/admin/channels";
import type { CreateRuleBody, RuleView, UpdateRuleBody } from "@/lib/notifications/contract";
import { cronError, nextRuns } from "@/lib/notifications/pipeline/cron";
import { newId } from "@/lib/ids";

export const listBaseRules = () => ({ items: describeBaseRules() });

export function ruleView(rule: NotificationRule, now: Date, groupSubscriptions = 0): z.input<typeof RuleView> {
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
    return tx.notificationRule.create({
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
  });
  return ruleView(rule, now);
}

export async function listRules(principal: Principal, page: PageQuery, now: Date) {
  const [rules, total, counts] = await withTenant(principal, (tx) =>
    Promise.all([
      tx.notificationRule.findMany({ orderBy: [{ key: "asc" }, { id: "asc" }], ...pageWindow(page) }),
      tx.notificationRule.count(),
      tx.notificationGroupSubscription.groupBy({ by: ["ruleId"], _count: true }),
    ]),
  );
  const byRule = new Map(counts.map((c) => [c.ruleId, c._count]));
  return pageBody(
    rules.map((r) => ruleView(r, now, byRule.get(r.id) ?? 0)),
    total,
    page,
  );
}

export async function getRule(principal: Principal, id: string, now: Date) {
  const [rule, subs] = await withTenant(principal, (tx) =>
    Promise.all([tx.notificationRule.findUnique({ where: { id } }), tx.notificationGroupSubscription.count({ where: { ruleId: id } })]),
  );
  if (!rule) throw notFound("Rule");
  return ruleView(rule, now, subs);
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
    return tx.notificationRule.update({
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
  });
  return getRule(principal, rule.id, now);
}
