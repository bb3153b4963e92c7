import "server-only";
import type { Principal } from "@/lib/access/roles";
import { withTenant } from "@/lib/db/tenant";
import { pageBody, pageWindow, type PageQuery } from "@/lib/pagination";
import type { NotificationInboxItem } from "@/lib/db/generated/client";
import { notFound } from "@/lib/errors";

const view = (i: NotificationInboxItem) => ({ id: i.id, title: i.title, body: i.body, severity: i.severity, created_at: i.createdAt, read_at: i.readAt });

/** The caller's own in-app notifications (RLS narrows to the organization, the filter to the user). */
export async function listInbox(principal: Principal, page: PageQuery) {
  const mine = { userId: principal.userId };
  const [items, total, unread] = await withTenant(principal, (tx) =>
    Promise.all([
      tx.notificationInboxItem.findMany({ where: mine, orderBy: [{ createdAt: "desc" }, { id: "asc" }], ...pageWindow(page) }),
      tx.notificationInboxItem.count({ where: mine }),
      tx.notificationInboxItem.count({ where: { ...mine, readAt: null } }),
    ]),
  );
  return { ...pageBody(items.map(view), total, page), unread };
}

export async function markInboxRead(principal: Principal, id: string, now: Date) {
  return withTenant(principal, async (tx) => {
    const item = await tx.notificationInboxItem.findFirst({ where: { id, userId: principal.userId } });
    if (!item) throw notFound("Notification");
    return view(item.readAt ? item : await tx.notificationInboxItem.update({ where: { id }, data: { readAt: now } }));
  });
}
