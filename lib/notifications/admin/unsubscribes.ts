import "server-only";
import type { Principal } from "@/lib/access/roles";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import { pageBody, pageWindow, type PageQuery } from "@/lib/pagination";
import type { NotificationUnsubscribe } from "@/lib/db/generated/client";
import { type ValidationItem, notFound, conflict, unprocessable } from "@/lib/errors";
import type { CreateUnsubscribeBody } from "@/lib/notifications/contract";
import { newId } from "@/lib/ids";

type Names = { rules: Map<string, string>; groups: Map<string, string>; users: Map<string, string> };

function view(u: NotificationUnsubscribe, names: Names) {
  return {
    id: u.id,
    user_id: u.userId,
    user_name: u.userId ? (names.users.get(u.userId) ?? null) : null,
    address: u.address,
    scope: u.ruleId ? ("rule" as const) : u.groupSubscriptionId ? ("group" as const) : ("all" as const),
    rule_id: u.ruleId,
    rule_key: u.ruleId ? (names.rules.get(u.ruleId) ?? null) : null,
    group_subscription_id: u.groupSubscriptionId,
    group_name: u.groupSubscriptionId ? (names.groups.get(u.groupSubscriptionId) ?? null) : null,
    created_at: u.createdAt,
  };
}

/** Rule keys, group names and the names of the members among `rows`, read under RLS. */
async function names(tx: TenantTx, rows: readonly NotificationUnsubscribe[]): Promise<Names> {
  const userIds = [...new Set(rows.flatMap((r) => (r.userId ? [r.userId] : [])))];
  const [rules, groups, users] = await Promise.all([
    tx.notificationRule.findMany({ select: { id: true, key: true } }),
    tx.notificationGroupSubscription.findMany({ select: { id: true, groupName: true } }),
    tx.user.findMany({ where: { id: { in: userIds } }, select: { id: true, name: true } }),
  ]);
  return { rules: new Map(rules.map((r) => [r.id, r.key])), groups: new Map(groups.map((g) => [g.id, g.groupName])), users: new Map(users.map((u) => [u.id, u.name])) };
}

/** Records an opt-out. Ids and keys of another organization are unknown here (RLS), so they fail as 422 like any unknown reference. */
export async function createUnsubscribe(principal: Principal, body: CreateUnsubscribeBody, now: Date) {
  return withTenant(principal, async (tx) => {
    const problems: ValidationItem[] = [];
    if (body.user_id && !(await tx.user.findUnique({ where: { id: body.user_id }, select: { id: true } }))) {
      problems.push({ loc: ["body", "user_id"], msg: "No user with this id in your organization", type: "unknown_user" });
    }
    const rule = body.rule_key ? await tx.notificationRule.findUnique({ where: { orgId_key: { orgId: principal.orgId, key: body.rule_key } }, select: { id: true } }) : null;
    if (body.rule_key && !rule) problems.push({ loc: ["body", "rule_key"], msg: `No custom rule with key '${body.rule_key}'`, type: "unknown_rule" });
    const group = body.group_subscription_id ? await tx.notificationGroupSubscription.findUnique({ where: { id: body.group_subscription_id }, select: { id: true } }) : null;
    if (body.group_subscription_id && !group) problems.push({ loc: ["body", "group_subscription_id"], msg: "No group subscription with this id", type: "unknown_group" });
    if (problems.length > 0) throw unprocessable(problems);
    const data = { userId: body.user_id ?? null, address: body.address ?? null, ruleId: rule?.id ?? null, groupSubscriptionId: group?.id ?? null };
    if (await tx.notificationUnsubscribe.findFirst({ where: data })) throw conflict("This recipient is already unsubscribed from that");
    const row = await tx.notificationUnsubscribe.create({ data: { id: newId("nus"), orgId: principal.orgId, ...data, createdBy: principal.userId, createdAt: now } });
    return view(row, await names(tx, [row]));
  });
}

export async function listUnsubscribes(principal: Principal, page: PageQuery) {
  return withTenant(principal, async (tx) => {
    const [rows, total] = await Promise.all([tx.notificationUnsubscribe.findMany({ orderBy: [{ createdAt: "asc" }, { id: "asc" }], ...pageWindow(page) }), tx.notificationUnsubscribe.count()]);
    const n = await names(tx, rows);
    return pageBody(
      rows.map((r) => view(r, n)),
      total,
      page,
    );
  });
}

export async function deleteUnsubscribe(principal: Principal, id: string) {
  const { count } = await withTenant(principal, (tx) => tx.notificationUnsubscribe.deleteMany({ where: { id } }));
  if (count === 0) throw notFound("Unsubscribe");
}
