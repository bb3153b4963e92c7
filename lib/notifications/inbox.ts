import "server-only";
import type { Principal } from "@/lib/auth/roles";
import { withTenant } from "@/lib/db/tenant";
import type { NotificationInboxItem } from "@/lib/db/generated/client";
import { notFound } from "@/lib/errors";

const view = (i: NotificationInboxItem) => ({ id: i.id, title: i.title, body: i.body, severity: i.severity, created_at: i.createdAt, read_at: i.readAt });

/** The caller's own in-app notifications (RLS narrows to the organization, the filter to the user). */
export async function listInbox(principal: Principal, limit: number) {
  const [items, unread] = await withTenant(principal, (tx) =>
    Promise.all([
      tx.notificationInboxItem.findMany({ where: { userId: principal.userId }, orderBy: [{ createdAt: "desc" }, { id: "asc" }], take: limit }),
      tx.notificationInboxItem.count({ where: { userId: principal.userId, readAt: null } }),
    ]),
  );
  return { items: items.map(view), unread };
}

export async function markInboxRead(principal: Principal, id: string, now: Date) {
  return withTenant(principal, async (tx) => {
    const item = await tx.notificationInboxItem.findFirst({ where: { id, userId: principal.userId } });
    if (!item) throw notFound("Notification");
    return view(item.readAt ? item : await tx.notificationInboxItem.update({ where: { id }, data: { readAt: now } }));
  });
}
