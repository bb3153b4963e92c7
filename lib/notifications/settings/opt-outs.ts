import "server-only";
import type { TenantTx } from "@/lib/db/tenant";
import type { NotificationUnsubscribe } from "@/lib/db/generated/client";

/**
 * Who opted out of what, as the fan-out asks it: why `recipient` (a user, and
 * the address they or a group receive mail at) must not hear about `ruleId`,
 * or null. Group opt-outs are answered by `leftGroup`.
 */
export interface OptOuts {
  fromRule(ruleId: string, who: { userId?: string; address?: string }): string | null;
  leftGroup(groupId: string, address: string): boolean;
}

export async function loadOptOuts(tx: TenantTx): Promise<OptOuts> {
  const rows = await tx.notificationUnsubscribe.findMany();
  const userIds = [...new Set(rows.flatMap((r) => (r.userId ? [r.userId] : [])))];
  const emails = new Map((await tx.user.findMany({ where: { id: { in: userIds } }, select: { id: true, email: true } })).map((u) => [u.id, u.email.toLowerCase()]));
  const addressOf = (r: NotificationUnsubscribe) => r.address ?? (r.userId ? emails.get(r.userId) : undefined);
  const matches = (r: NotificationUnsubscribe, who: { userId?: string; address?: string }) =>
    (who.userId !== undefined && r.userId === who.userId) || (who.address !== undefined && addressOf(r) === who.address.toLowerCase());
  return {
    fromRule(ruleId, who) {
      const hit = rows.find((r) => !r.groupSubscriptionId && (r.ruleId === null || r.ruleId === ruleId) && matches(r, who));
      if (!hit) return null;
      return hit.ruleId ? "recipient unsubscribed from this rule" : "recipient unsubscribed from all notifications";
    },
    leftGroup: (groupId, address) => rows.some((r) => r.groupSubscriptionId === groupId && addressOf(r) === address.toLowerCase()),
  };
}
