import "server-only";
import type { Principal } from "@/lib/access/roles";
import { withTenant } from "@/lib/db/tenant";
import { Conflict } from "@/lib/errors";
import type { ChannelKind } from "@/lib/notifications/channel-kinds";
import { resolveChannel } from "@/lib/notifications/settings/channels";
import { newId } from "@/lib/ids";
import { SendError, sendExternal } from "@/lib/notifications/transports/send";

/**
 * Sends a test message right away (not queued), so the admin sees the
 * provider's answer: email to the caller's own address, Slack to the
 * configured channel, a webhook to its URL. In-app needs no provider.
 */
export async function testChannel(principal: Principal, kind: ChannelKind, now: Date) {
  if (kind === "in_app") return { kind, ok: true, recipient: principal.userId, detail: "In-app notifications are always available" };
  const { channel, email } = await withTenant(principal, async (tx) => ({
    channel: await resolveChannel(tx, principal.orgId, kind),
    email: (await tx.user.findUnique({ where: { id: principal.userId }, select: { email: true } }))?.email,
  }));
  if (!channel) throw new Conflict(`Channel '${kind}' is not configured; PUT its configuration first`);
  const recipient = kind === "email" ? (email ?? "") : kind === "slack" ? String(channel.settings.channel ?? "slack-webhook") : new URL(String(channel.settings.url)).host;
  try {
    await sendExternal(channel, {
      id: newId("test"),
      recipient,
      subject: "Quarry test message",
      body: `A test of the ${kind} channel, sent by ${principal.userId}.`,
      severity: "info",
      ruleKey: "test",
      sentAt: now,
    });
    return { kind, ok: true, recipient, detail: "Sent" };
  } catch (error) {
    if (error instanceof SendError) return { kind, ok: false, recipient, detail: error.message };
    throw error;
  }
}
