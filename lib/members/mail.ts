import "server-only";
import { withTenant } from "@/lib/db/tenant";
import { newId } from "@/lib/ids";
import { log } from "@/lib/log";
import { resolveChannel } from "@/lib/notifications/settings/channels";
import { demoOutboxReason, isDemoOutbox } from "@/lib/notifications/transports/outbox-channel";
import { SendError, sendExternal } from "@/lib/notifications/transports/send";

export type Delivery = "sent" | "demo_outbox" | "failed";
export type AccountMailKind = "invitation" | "password_reset";

/**
 * One account e-mail (an invitation, a password reset) through the organization's e-mail channel, the
 * notifications' own transport, sent now (not queued): the admin sees at once whether it went, and copies
 * the link when it did not. An organization without an e-mail channel of its own (none, a disabled one, or
 * the demo's outbox) gets the message kept in the demo outbox, which its admins read (docs/security.md, "Members").
 */
export async function sendAccountMail(
  orgId: string,
  message: { kind: AccountMailKind; to: string; subject: string; body: string },
): Promise<{ delivery: Delivery; detail: string }> {
  const channel = await withTenant({ orgId }, (tx) => resolveChannel(tx, orgId, "email"));
  if (!channel || !channel.enabled || isDemoOutbox(channel.settings)) {
    await keepInDemoOutbox(orgId, message);
    return { delivery: "demo_outbox", detail: "No e-mail channel: the message is kept in the demo outbox (Notifications), nothing was sent; copy the link" };
  }
  try {
    await sendExternal(channel, { id: newId("acm"), recipient: message.to, subject: message.subject, body: message.body, severity: "info", ruleKey: "account", sentAt: new Date() });
    return { delivery: "sent", detail: `Sent to ${message.to}` };
  } catch (error) {
    if (!(error instanceof SendError)) throw error;
    log.warn("account e-mail not sent", { orgId, reason: error.message });
    return { delivery: "failed", detail: `Not sent (${error.message}): copy the link` };
  }
}

/** The message as a delivery of the demo outbox: delivered on its one attempt, as the pipeline keeps a rule's. */
async function keepInDemoOutbox(orgId: string, message: { kind: AccountMailKind; to: string; subject: string; body: string }): Promise<void> {
  const now = new Date();
  const id = newId("ndl");
  await withTenant({ orgId }, (tx) =>
    tx.notificationDelivery.create({
      data: {
        id, orgId, accountMail: message.kind, channel: "email", recipient: message.to, status: "delivered", reason: demoOutboxReason(1),
        subject: message.subject, body: message.body, severity: "info", dedupeKey: `account:${id}`, attempts: 1, maxAttempts: 1,
        createdAt: now, updatedAt: now, deliveredAt: now,
      },
    }),
  );
}
