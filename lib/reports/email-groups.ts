import "server-only";
import type { Principal } from "@/lib/access/roles";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import { pageBody, pageWindow, type PageQuery } from "@/lib/pagination";

/**
 * The organization's email groups as report schedules address them: the groups admins set up for notification rules
 * (notification_group_subscriptions, lib/notifications/admin/group-subscriptions.ts), by id. Editors see names and
 * sizes, not the addresses: who receives what is decided per member at each run (lib/reports/schedules-run.ts).
 */
export async function listReportEmailGroups(principal: Principal, page: PageQuery) {
  return withTenant(principal, async (tx) => {
    const [rows, total] = await Promise.all([
      tx.notificationGroupSubscription.findMany({ orderBy: [{ createdAt: "asc" }, { id: "asc" }], ...pageWindow(page) }),
      tx.notificationGroupSubscription.count(),
    ]);
    const rules = new Map((await tx.notificationRule.findMany({ where: { id: { in: rows.map((r) => r.ruleId) } }, select: { id: true, key: true } })).map((r) => [r.id, r.key]));
    return pageBody(
      rows.map((r) => ({ id: r.id, group_name: r.groupName, rule_key: rules.get(r.ruleId) ?? "", member_count: r.members.length, created_at: r.createdAt.toISOString() })),
      total,
      page,
    );
  });
}

/** The groups of `ids` that exist in the organization (row-level security hides another organization's), with their members now. */
export async function emailGroups(tx: TenantTx, ids: readonly string[]) {
  if (ids.length === 0) return [];
  return tx.notificationGroupSubscription.findMany({ where: { id: { in: [...ids] } }, select: { id: true, groupName: true, members: true }, orderBy: { groupName: "asc" } });
}
