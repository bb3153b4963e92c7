import "server-only";
import type { Principal } from "@/lib/access/roles";
import { recordAudit } from "@/lib/audit/record";
import { withTenant } from "@/lib/db/tenant";
import { ChannelKind } from "@/lib/notifications/channel-kinds";
import type { QuietHoursBody, QuietWindow } from "@/lib/notifications/contract";
import { loadQuietHours, type QuietHoursPolicy } from "@/lib/notifications/settings/quiet-hours";

const view = (policy: QuietHoursPolicy) => ({
  time_zone: policy.timeZone,
  org: policy.org,
  channels: Object.fromEntries(ChannelKind.options.map((kind) => [kind, policy.channels[kind] ?? null])) as Record<ChannelKind, QuietWindow | null>,
});

export async function getQuietHours(principal: Principal) {
  return view(await withTenant(principal, loadQuietHours));
}

/** Replaces the organization's quiet hours: `org` and every channel given; a channel left out or null has no window of its own. */
export async function putQuietHours(principal: Principal, body: QuietHoursBody, now: Date) {
  const wanted: [string, QuietWindow][] = [];
  if (body.org) wanted.push(["org", body.org]);
  for (const kind of ChannelKind.options) {
    const window = body.channels[kind];
    if (window) wanted.push([kind, window]);
  }
  return view(
    await withTenant(principal, async (tx) => {
      const before = view(await loadQuietHours(tx));
      await tx.notificationQuietHours.deleteMany({});
      await tx.notificationQuietHours.createMany({
        data: wanted.map(([scope, w]) => ({ orgId: principal.orgId, scope, startTime: w.start, endTime: w.end, action: w.action, updatedBy: principal.userId, updatedAt: now })),
      });
      const after = await loadQuietHours(tx);
      await recordAudit(tx, { actor: principal, action: "quiet_hours.update", target: { id: null, name: "Quiet hours" }, before, after: view(after) });
      return after;
    }),
  );
}
