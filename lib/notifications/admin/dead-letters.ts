import "server-only";
import type { Principal } from "@/lib/access/roles";
import { notificationsConfig } from "@/lib/config/notifications";
import { withTenant } from "@/lib/db/tenant";
import { pageBody, pageWindow, type PageQuery } from "@/lib/pagination";
import { notFound, conflict } from "@/lib/errors";
import { deliveryView, ruleKeys, senderOf } from "@/lib/notifications/admin/delivery-health";
import { QUEUES } from "@/lib/job-queue";
import type { DeliverJob, Runtime } from "@/lib/notifications/pipeline/runtime";

export async function listDeadLetters(principal: Principal, page: PageQuery) {
  return withTenant(principal, async (tx) => {
    const [keys, total, rows] = await Promise.all([
      ruleKeys(tx),
      tx.notificationDelivery.count({ where: { status: "dead" } }),
      tx.notificationDelivery.findMany({ where: { status: "dead" }, orderBy: [{ updatedAt: "desc" }, { id: "asc" }], ...pageWindow(page) }),
    ]);
    return pageBody(
      rows.map((d) => deliveryView(d, keys.get(senderOf(d)) ?? "")),
      total,
      page,
    );
  });
}

/** Gives a dead letter a fresh round of attempts. */
export async function requeueDeadLetter(principal: Principal, id: string, rt: Runtime) {
  const now = rt.clock.now();
  const d = await withTenant(principal, async (tx) => {
    const existing = await tx.notificationDelivery.findUnique({ where: { id } });
    if (!existing) throw notFound("Delivery");
    if (existing.status !== "dead") throw conflict(`Only dead letters can be requeued; this delivery is ${existing.status}`);
    const keys = await ruleKeys(tx);
    const updated = await tx.notificationDelivery.update({
      where: { id },
      data: { status: "pending", attempts: 0, maxAttempts: notificationsConfig().max_attempts, nextAttemptAt: now, reason: `requeued by ${principal.userId}`, updatedAt: now },
    });
    return deliveryView(updated, keys.get(senderOf(updated)) ?? "");
  });
  await rt.queue.send(QUEUES.deliver, { orgId: principal.orgId, deliveryId: d.id, attempt: 1 } satisfies DeliverJob);
  return d;
}
