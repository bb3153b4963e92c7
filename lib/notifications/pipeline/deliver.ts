import "server-only";
import { notificationsConfig } from "@/lib/config/notifications";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import type { NotificationDelivery } from "@/lib/db/generated/client";
import { resolveChannel } from "@/lib/notifications/settings/channels";
import { ChannelKind } from "@/lib/notifications/channel-kinds";
import { newId } from "@/lib/ids";
import { QUEUES, deliveryLeaseSeconds } from "@/lib/job-queue";
import type { DeliverJob, Runtime } from "@/lib/notifications/pipeline/runtime";
import { demoOutboxReason, isDemoOutbox } from "@/lib/notifications/transports/outbox-channel";
import { SendError, sendAlert, sendExternal, sendReport, type OutboundMessage, type ResolvedChannel } from "@/lib/notifications/transports/send";

function backoffMs(failedAttempts: number): number {
  const cfg = notificationsConfig();
  return Math.min(cfg.backoff_max_seconds, cfg.backoff_base_seconds * 2 ** (failedAttempts - 1)) * 1000;
}

/**
 * One delivery attempt (a pg-boss job). The delivery is claimed first (only
 * one worker sends an attempt; a crashed worker's claim lapses after the job's
 * expiry), sent outside any transaction, then recorded: delivered, retried
 * later with exponential backoff, or dead-lettered with the last error.
 */
export async function deliver(rt: Runtime, job: DeliverJob): Promise<"done" | "deferred"> {
  const scope = { orgId: job.orgId };
  const now = rt.clock.now();
  let notBefore: Date | null = null;
  const claim = await withTenant(scope, async (tx) => {
    const d = await tx.notificationDelivery.findUnique({ where: { id: job.deliveryId } });
    if (!d || d.attempts !== job.attempt - 1) return null;
    // Handed out before its time (the queue runs on the database clock, the backoff on ours): put it back.
    if ((d.status === "pending" || d.status === "retrying") && d.nextAttemptAt && d.nextAttemptAt > now) {
      notBefore = d.nextAttemptAt;
      return null;
    }
    // Another worker's claim that has not lapsed yet: the queue judges a job's expiry from when it was handed out,
    // a little before the claim was written, so a dead worker's job can come back just before its claim lapses.
    // Put it back until then; dropping it would strand the delivery in `sending`.
    const lapsesAt = new Date(d.updatedAt.getTime() + deliveryLeaseSeconds() * 1000);
    if (d.status === "sending" && lapsesAt > now) {
      notBefore = lapsesAt;
      return null;
    }
    if (d.status !== "pending" && d.status !== "retrying" && d.status !== "sending") return null;
    const taken = await tx.notificationDelivery.updateMany({ where: { id: d.id, status: d.status, updatedAt: d.updatedAt }, data: { status: "sending", updatedAt: now } });
    if (taken.count === 0) return null;
    const kind = ChannelKind.parse(d.channel);
    const channel = await resolveChannel(tx, job.orgId, kind);
    if (!channel || !channel.enabled) {
      await finish(tx, d, { status: "skipped", reason: "channel not configured or disabled", attempts: d.attempts }, now);
      return null;
    }
    if (kind === "in_app") {
      await tx.notificationInboxItem.create({
        data: { id: newId("nib"), orgId: job.orgId, userId: d.recipient, deliveryId: d.id, title: d.subject, body: d.body, severity: d.severity, createdAt: now },
      });
      await finish(tx, d, { status: "delivered", reason: `delivered to the in-app inbox on attempt ${job.attempt}`, attempts: job.attempt, deliveredAt: now }, now);
      return null;
    }
    if ((kind === "email" || kind === "slack") && isDemoOutbox(channel.settings)) {
      await finish(tx, d, { status: "delivered", reason: demoOutboxReason(job.attempt), attempts: job.attempt, deliveredAt: now }, now);
      return null;
    }
    const rule = d.ruleId ? await tx.notificationRule.findUnique({ where: { id: d.ruleId }, select: { key: true } }) : null;
    return { d, channel, ruleKey: rule?.key ?? "" };
  });
  if (notBefore) {
    await rt.queue.send(QUEUES.deliver, job, { startAfter: notBefore });
    return "deferred";
  }
  if (!claim) return "done";
  const { d, channel, ruleKey } = claim;
  let failure: SendError | null = null;
  try {
    const message = { id: d.id, recipient: d.recipient, subject: d.subject, body: d.body, severity: d.severity, ruleKey, sentAt: now };
    if (d.reportRunId) await sendReportDelivery(rt, channel, d, message);
    else if (d.alertMessageId) await sendAlertDelivery(rt, channel, d, message);
    else await sendExternal(channel, message);
  } catch (error) {
    failure = error instanceof SendError ? error : new SendError(String(error), true);
  }
  const done = rt.clock.now();
  const retryAt = failure?.transient && job.attempt < d.maxAttempts ? new Date(done.getTime() + backoffMs(job.attempt)) : null;
  await withTenant(scope, (tx) => {
    if (!failure) return finish(tx, d, { status: "delivered", reason: `delivered on attempt ${job.attempt}`, attempts: job.attempt, deliveredAt: done }, done);
    if (retryAt) {
      return finish(tx, d, { status: "retrying", reason: `attempt ${job.attempt} of ${d.maxAttempts} failed; retrying at ${retryAt.toISOString()}`, attempts: job.attempt, lastError: failure.message, nextAttemptAt: retryAt }, done);
    }
    const reason = failure.transient ? `failed after ${job.attempt} attempts` : `permanent failure on attempt ${job.attempt}`;
    return finish(tx, d, { status: "dead", reason, attempts: job.attempt, lastError: failure.message }, done);
  });
  if (retryAt) await rt.queue.send(QUEUES.deliver, { orgId: job.orgId, deliveryId: d.id, attempt: job.attempt + 1 } satisfies DeliverJob, { startAfter: retryAt });
  return "done";
}

/** A scheduled report's delivery: its scope's files (rendered now if the run could not), attached or linked. */
async function sendReportDelivery(rt: Runtime, channel: ResolvedChannel, d: NotificationDelivery, message: OutboundMessage) {
  // Only a runtime built without the worker (lib/worker.ts) lacks them: the attempt fails as a transient send error.
  if (!rt.reports) throw new SendError("a report delivery needs the reports' hooks of the worker (lib/worker.ts)", true);
  await sendReport(channel, { ...message, ...(await rt.reports.message(rt, d, message.sentAt)) });
}

/** A widget alert's delivery: the widget's picture drawn in the delivery's scope, shown or linked. */
async function sendAlertDelivery(rt: Runtime, channel: ResolvedChannel, d: NotificationDelivery, message: OutboundMessage) {
  if (!rt.alerts) throw new SendError("an alert delivery needs the alerts' hooks of the worker (lib/worker.ts)", true);
  await sendAlert(channel, { ...message, ...(await rt.alerts.message(rt, d)) });
}

async function finish(
  tx: TenantTx,
  d: NotificationDelivery,
  outcome: { status: string; reason: string; attempts: number; lastError?: string; nextAttemptAt?: Date; deliveredAt?: Date },
  now: Date,
) {
  await tx.notificationDelivery.update({
    where: { id: d.id },
    data: {
      status: outcome.status,
      reason: outcome.reason,
      attempts: outcome.attempts,
      lastError: outcome.lastError ?? d.lastError,
      nextAttemptAt: outcome.nextAttemptAt ?? null,
      deliveredAt: outcome.deliveredAt ?? null,
      updatedAt: now,
    },
  });
}
