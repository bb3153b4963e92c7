import "server-only";
import type { Principal } from "@/lib/access/roles";
import { recordAudit } from "@/lib/audit/record";
import { withTenant } from "@/lib/db/tenant";
import { pageBody, pageWindow, type PageQuery } from "@/lib/pagination";
import { notFound, conflict, unprocessable } from "@/lib/errors";
import type { CreateGroupSubscriptionBody } from "@/lib/notifications/contract";
import { newId } from "@/lib/ids";

/**
 * A group subscription is a named email group (its member addresses inline)
 * fanned out from one rule: each member receives the rule's email deliveries,
 * as the organization's admins do, once per address.
 */
export async function createGroupSubscription(principal: Principal, body: CreateGroupSubscriptionBody, now: Date) {
  return withTenant(principal, async (tx) => {
    const rule = await tx.notificationRule.findUnique({ where: { orgId_key: { orgId: principal.orgId, key: body.rule_key } } });
    if (!rule) throw unprocessable([{ loc: ["body", "rule_key"], msg: `No custom rule with key '${body.rule_key}'`, type: "unknown_rule" }]);
    if (!rule.defaultChannels.includes("email")) {
      throw unprocessable([{ loc: ["body", "rule_key"], msg: "The rule does not deliver by email; add 'email' to its default_channels first", type: "rule_without_email" }]);
    }
    if (await tx.notificationGroupSubscription.findUnique({ where: { ruleId_groupName: { ruleId: rule.id, groupName: body.group_name } } })) {
      throw conflict(`Group '${body.group_name}' is already subscribed to ${rule.key}`);
    }
    const row = await tx.notificationGroupSubscription.create({
      data: { id: newId("ngs"), orgId: principal.orgId, ruleId: rule.id, groupName: body.group_name, members: [...new Set(body.members)].sort(), createdAt: now },
    });
    const created = { id: row.id, rule_id: rule.id, rule_key: rule.key, group_name: row.groupName, members: row.members, created_at: row.createdAt };
    await recordAudit(tx, { actor: principal, action: "email_group.create", target: { id: row.id, name: row.groupName }, after: created });
    return created;
  });
}

export async function listGroupSubscriptions(principal: Principal, page: PageQuery) {
  return withTenant(principal, async (tx) => {
    const [rows, total, rules] = await Promise.all([
      tx.notificationGroupSubscription.findMany({ orderBy: [{ createdAt: "asc" }, { id: "asc" }], ...pageWindow(page) }),
      tx.notificationGroupSubscription.count(),
      tx.notificationRule.findMany({ select: { id: true, key: true } }),
    ]);
    const keys = new Map(rules.map((r) => [r.id, r.key]));
    return pageBody(
      rows.map((r) => ({ id: r.id, rule_id: r.ruleId, rule_key: keys.get(r.ruleId) ?? "", group_name: r.groupName, members: r.members, created_at: r.createdAt })),
      total,
      page,
    );
  });
}

export async function deleteGroupSubscription(principal: Principal, id: string) {
  await withTenant(principal, async (tx) => {
    const row = await tx.notificationGroupSubscription.findUnique({ where: { id } });
    if (!row) throw notFound("Group subscription");
    await tx.notificationGroupSubscription.delete({ where: { id } });
    const before = { id: row.id, rule_id: row.ruleId, group_name: row.groupName, members: row.members, created_at: row.createdAt };
    await recordAudit(tx, { actor: principal, action: "email_group.delete", target: { id, name: row.groupName }, before });
  });
}
