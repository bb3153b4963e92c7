import "server-only";
import { notificationsConfig } from "@/lib/config/notifications";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import { newId } from "@/lib/ids";
import { QUEUES } from "@/lib/job-queue";
import type { ChannelKind } from "@/lib/notifications/channel-kinds";
import { resolveChannel } from "@/lib/notifications/settings/channels";
import { loadQuietHours, quietOutcome } from "@/lib/notifications/settings/quiet-hours";
import { headerText } from "@/lib/notifications/transports/header-text";
import type { DeliverJob, Runtime } from "@/lib/notifications/pipeline/runtime";

/** One channel and recipient a run may reach; a target with a skip reason is recorded as skipped, never sent. */
export interface DeliveryTarget {
  channel: ChannelKind;
  recipient: string;
  skipReason?: string;
  /** This recipient's own text (a report names the scope it was rendered in); the fan-out's body otherwise. */
  body?: string;
  /** The scope a report was rendered in for this recipient (lib/reports/schedules-scope.ts). */
  reportScope?: string;
}

/** What one run fans out: whose deliveries they are, what they say, and to whom. */
export interface FanOut {
  /** A rule's run, a report schedule's run, a data pull's failed run, or a widget alert's message: the columns every delivery row carries. */
  origin: { runId: string; ruleId: string } | { reportRunId: string; scheduleId: string } | { pullRunId: string } | { alertMessageId: string };
  subject: string;
  /** The text of every delivery whose target has none of its own. */
  body?: string;
  severity: string;
  /** Deliveries of the same key to the same channel and recipient within the dedupe window are skipped. */
  dedupeKey: string;
  targets: readonly DeliveryTarget[];
}

/** Why a target on a channel that cannot send now is skipped. */
export const CHANNEL_UNUSABLE = "channel not configured or disabled";

/** Why an address that left every group naming it is skipped. */
export const leftGroupsReason = (groupNames: readonly string[]) => `recipient unsubscribed from group ${groupNames.map((n) => `'${n}'`).join(", ")}`;

/** The single recipient of the organization's Slack or webhook channel, as deliveries name it: the bot's channel or "slack-webhook", the webhook's host. */
export async function channelRecipient(tx: TenantTx, orgId: string, kind: "slack" | "webhook"): Promise<string> {
  const resolved = await resolveChannel(tx, orgId, kind);
  if (kind === "slack") return resolved?.settings.mode === "bot" ? String(resolved.settings.channel) : "slack-webhook";
  return new URL(String(resolved?.settings.url)).host;
}

/**
 * The one fan-out of the pipeline, for rules, report schedules and whatever else sends through it. In one tenant
 * transaction, `claim` claims the run (so a redelivered job fans out nothing: it answers null) and names the
 * targets; each target then keeps its own skip reason, or is skipped as a duplicate of a delivery of the same key
 * sent within the dedupe window, or is deferred (or skipped) by quiet hours; the rows are written, and after the
 * commit each pending one is queued for its first attempt. Answers how many were queued.
 */
export async function fanOut(rt: Runtime, orgId: string, now: Date, claim: (tx: TenantTx) => Promise<FanOut | null>): Promise<number> {
  const pending = await withTenant({ orgId }, async (tx) => {
    const run = await claim(tx);
    if (!run) return [];
    const rows = await deliveryRows(tx, orgId, run, now);
    await tx.notificationDelivery.createMany({ data: rows, skipDuplicates: true });
    return rows.filter((r) => r.status === "pending").map((r) => ({ id: r.id, startAfter: r.nextAttemptAt }));
  });
  for (const d of pending) {
    const later = d.startAfter && d.startAfter > now ? { startAfter: d.startAfter } : undefined;
    await rt.queue.send(QUEUES.deliver, { orgId, deliveryId: d.id, attempt: 1 } satisfies DeliverJob, later);
  }
  return pending.length;
}

async function deliveryRows(tx: TenantTx, orgId: string, run: FanOut, now: Date) {
  const cfg = notificationsConfig();
  const since = new Date(now.getTime() - cfg.dedupe_window_minutes * 60_000);
  const [recent, quiet] = await Promise.all([
    tx.notificationDelivery.findMany({
      where: { dedupeKey: run.dedupeKey, createdAt: { gte: since }, status: { in: ["pending", "sending", "retrying", "delivered"] } },
      select: { channel: true, recipient: true },
    }),
    loadQuietHours(tx),
  ]);
  const seen = new Set(recent.map((d) => `${d.channel} ${d.recipient}`));
  // The subject becomes a mail header and a file name: whatever text it was built from, it is one clean line.
  const subject = headerText(run.subject);
  return run.targets.map((t) => {
    const duplicate = !t.skipReason && seen.has(`${t.channel} ${t.recipient}`);
    const quietly = t.skipReason || duplicate ? null : quietOutcome(quiet, t.channel, now);
    const skipReason = t.skipReason ?? (duplicate ? `deduplicated: the same finding was sent within ${cfg.dedupe_window_minutes} min` : quietly && "skip" in quietly ? quietly.skip : undefined);
    const deferTo = quietly && "deferTo" in quietly ? quietly : null;
    return {
      id: newId("ndl"),
      orgId,
      ...run.origin,
      reportScope: t.reportScope,
      channel: t.channel,
      recipient: t.recipient,
      status: skipReason ? "skipped" : "pending",
      reason: skipReason ?? deferTo?.reason ?? "queued",
      subject,
      body: t.body ?? run.body ?? "",
      severity: run.severity,
      dedupeKey: run.dedupeKey,
      maxAttempts: cfg.max_attempts,
      nextAttemptAt: skipReason ? null : (deferTo?.deferTo ?? now),
      createdAt: now,
      updatedAt: now,
    };
  });
}
