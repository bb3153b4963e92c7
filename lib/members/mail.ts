import "server-only";
import { withTenant } from "@/lib/db/tenant";
import { newId } from "@/lib/ids";
import { log } from "@/lib/log";
import { resolveChannel } from "@/lib/notifications/settings/channels";
import { isDemoOutbox } from "@/lib/notifications/transports/outbox-channel";
import { SendError, sendExternal } from "@/lib/notifications/transports/send";

export type Delivery = "sent" | "demo_outbox" | "no_channel" | "failed";

/**
 * One account e-mail (an invitation, a password reset) through the organization's e-mail channel, the
 * notifications' own transport, sent now (not queued): the admin sees at once whether it went, and copies
 * the link when it did not. The demo outbox sends nothing, and its list keeps only rule and report
 * deliveries, so there the link is to be copied (docs/security.md, "Members").
 */
export async function sendAccountMail(orgId: string, message: { to: string; subject: string; body: string }): Promise<{ delivery: Delivery; detail: string }> {
  const channel = await withTenant({ orgId }, (tx) => resolveChannel(tx, orgId, "email"));
  if (!channel || !channel.enabled) return { delivery: "no_channel", detail: "The organization has no e-mail channel: copy the link and send it yourself" };
  if (isDemoOutbox(channel.settings)) return { delivery: "demo_outbox", detail: "The demo outbox sends nothing: copy the link" };
  try {
    await sendExternal(channel, { id: newId("acm"), recipient: message.to, subject: message.subject, body: message.body, severity: "info", ruleKey: "account", sentAt: new Date() });
    return { delivery: "sent", detail: `Sent to ${message.to}` };
  } catch (error) {
    if (!(error instanceof SendError)) throw error;
    log.warn("account e-mail not sent", { orgId, reason: error.message });
    return { delivery: "failed", detail: `Not sent (${error.message}): copy the link` };
  }
}
