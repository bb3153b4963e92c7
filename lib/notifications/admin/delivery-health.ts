import "server-only";
import type { Principal } from "@/lib/access/roles";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import type { NotificationDelivery } from "@/lib/db/generated/client";
import { ChannelKind } from "@/lib/notifications/channel-kinds";

const IN_FLIGHT = ["pending", "sending", "retrying"];

/** What each delivery's sender is called: a rule by its key, a report schedule (migration 0034) as `report: <name>`. */
export async function ruleKeys(tx: TenantTx): Promise<Map<string, string>> {
  const [rules, schedules] = await Promise.all([tx.notificationRule.findMany({ select: { id: true, key: true } }), tx.reportSchedule.findMany({ select: { id: true, name: true } })]);
  return new Map([...rules.map((r) => [r.id, r.key] as const), ...schedules.map((s) => [s.id, `report: ${s.name}`] as const)]);
}

/** The sender's id of a delivery: its rule or its report schedule. */
export const senderOf = (d: Pick<NotificationDelivery, "ruleId" | "scheduleId">): string => d.ruleId ?? d.scheduleId ?? "";

export function deliveryView(d: NotificationDelivery, ruleKey: string) {
  return {
    id: d.id,
    rule_id: d.ruleId,
    report_schedule_id: d.scheduleId,
    rule_key: ruleKey,
    channel: ChannelKind.parse(d.channel),
    recipient: d.recipient,
    status: d.status,
    reason: d.reason,
    subject: d.subject,
    attempts: d.attempts,
    max_attempts: d.maxAttempts,
    next_attempt_at: d.nextAttemptAt,
    last_error: d.lastError,
    created_at: d.createdAt,
    delivered_at: d.deliveredAt,
  };
}

/** Recent deliveries with their reasons, per-channel success rates and an hourly series over `hours` up to `now`. */
export async function deliveryHealth(principal: Principal, query: { hours: number; limit: number }, now: Date) {
  const from = new Date(now.getTime() - query.hours * 3600_000);
  return withTenant(principal, async (tx) => {
    const [keys, recent, byChannel, series] = await Promise.all([
      ruleKeys(tx),
      tx.notificationDelivery.findMany({ where: { createdAt: { gte: from, lte: now } }, orderBy: [{ createdAt: "desc" }, { id: "asc" }], take: query.limit }),
      tx.notificationDelivery.groupBy({ by: ["channel", "status"], where: { createdAt: { gte: from, lte: now } }, _count: true }),
      tx.$queryRaw<{ bucket: Date; status: string; n: number }[]>`
        SELECT date_trunc('hour', created_at) AS bucket, status, count(*)::int AS n
          FROM notification_deliveries WHERE created_at >= ${from} AND created_at <= ${now}
         GROUP BY 1, 2 ORDER BY 1`,
    ]);
    const channels = ChannelKind.options.map((channel) => {
      const count = (statuses: string[]) => byChannel.filter((r) => r.channel === channel && statuses.includes(r.status)).reduce((n, r) => n + r._count, 0);
      const delivered = count(["delivered"]);
      const dead = count(["dead"]);
      return { channel, delivered, dead, skipped: count(["skipped"]), in_flight: count(IN_FLIGHT), success_rate: delivered + dead > 0 ? delivered / (delivered + dead) : null };
    });
    const buckets = new Map<number, { bucket: Date; delivered: number; dead: number; skipped: number; in_flight: number }>();
    for (const row of series) {
      const key = new Date(row.bucket).getTime();
      const b = buckets.get(key) ?? { bucket: new Date(key), delivered: 0, dead: 0, skipped: 0, in_flight: 0 };
      if (row.status === "delivered" || row.status === "dead" || row.status === "skipped") b[row.status] += row.n;
      else b.in_flight += row.n;
      buckets.set(key, b);
    }
    return { from, to: now, channels, series: [...buckets.values()], recent: recent.map((d) => deliveryView(d, keys.get(senderOf(d)) ?? "")) };
  });
}
