import "server-only";
import { Role } from "@/lib/access/roles";
import type { TenantTx } from "@/lib/db/tenant";
import { CHANNEL_UNUSABLE, channelRecipient } from "@/lib/notifications/pipeline/fan-out";
import { usableKinds } from "@/lib/notifications/settings/channels";
import { reportAllowedDomains } from "@/lib/organizations/settings";
import { emailGroups } from "@/lib/reports/email-groups";
import { domainOf, sharedApproval } from "@/lib/reports/schedules";
import { reportScope, scopeKey, withinLocations, type ReportScope } from "@/lib/reports/schedules-scope";
import type { AlertMessageTarget } from "./contract";
import type { AlertRecord } from "./record";

/** The recipients of one scope: who is told what that scope's evaluation finds. */
export interface ScopedTargets {
  scope: ReportScope;
  /** Who the scope's queries run for in logs: one of its users, or the owner for the shared scope. */
  queryFor: string;
  targets: AlertMessageTarget[];
}

/** What every alert of an organization reads alike: the channels that can send now and the report domains. */
export interface OrganizationChannels {
  usable: ReadonlySet<string>;
  domains: readonly string[];
}

/** Read once per evaluation, for all its alerts. */
export async function organizationChannels(tx: TenantTx): Promise<OrganizationChannels> {
  const [usable, domains] = await Promise.all([usableKinds(tx), reportAllowedDomains(tx)]);
  return { usable, domains };
}

/**
 * Who an alert tells and in which scope, read now (issue 45 §2), by the rules report schedules follow
 * (lib/reports/schedules-scope.ts, sharedApproval): each user (the owner for `me`, the members named, the members of
 * email groups who are users) in their own role and locations, so a manager limited to two locations is alerted on
 * those two; other group addresses, Slack and the webhook in the alert's shared scope, only while an admin's approval
 * stands for the dashboard's published version and within the owner's current locations, and addresses only in the
 * organization's report domains. A user who left the organization is no longer found, so is told nothing. Scopes
 * whose every target is skipped are left out: nobody would hear what they find.
 */
export async function alertTargets(tx: TenantTx, alert: AlertRecord, organization?: OrganizationChannels): Promise<ScopedTargets[]> {
  const { row, definition } = alert;
  const recipients = definition.recipients;
  const groups = await emailGroups(tx, recipients.group_ids);
  const members = [...new Set(groups.flatMap((g) => g.members.map((m) => m.toLowerCase())))].sort();
  const userIds = [...new Set([...(recipients.me ? [row.ownerId] : []), ...recipients.user_ids])];
  const { usable, domains } = organization ?? (await organizationChannels(tx));
  const [users, owner, dashboard] = await Promise.all([
    tx.user.findMany({
      where: { OR: [{ id: { in: userIds } }, ...(members.length > 0 ? [{ email: { in: members, mode: "insensitive" as const } }] : [])] },
      select: { id: true, email: true, role: true, locationIds: true },
      orderBy: { id: "asc" },
    }),
    tx.user.findUnique({ where: { id: row.ownerId }, select: { locationIds: true } }),
    tx.dashboard.findUnique({ where: { id: row.dashboardId }, select: { publishedVersion: true } }),
  ]);
  const shared = reportScope(Role.parse(row.sharedRole), row.sharedLocationIds);
  const approval = sharedApproval(row, dashboard?.publishedVersion ?? null);
  const sharedSkip =
    approval.reason ??
    (!owner ? "the alert's owner is no longer a member of the organization" : !withinLocations(shared.locationIds, owner.locationIds.length > 0 ? owner.locationIds : null) ? "the shared scope is wider than its owner's current locations" : undefined);

  const byScope = new Map<string, ScopedTargets>();
  const add = (scope: ReportScope, queryFor: string, target: AlertMessageTarget) => {
    const key = scopeKey(scope);
    const entry = byScope.get(key) ?? { scope, queryFor, targets: [] };
    if (entry.targets.some((t) => t.channel === target.channel && t.recipient === target.recipient)) return;
    entry.targets.push(target);
    byScope.set(key, entry);
  };
  const unusable = (channel: AlertMessageTarget["channel"]) => (usable.has(channel) ? undefined : CHANNEL_UNUSABLE);

  const wanted = new Set(userIds);
  const userOf = new Map(users.map((u) => [u.email.toLowerCase(), u]));
  const told = users.filter((u) => wanted.has(u.id) || members.includes(u.email.toLowerCase()));
  for (const u of told) {
    const scope = reportScope(Role.parse(u.role), u.locationIds);
    // A member reached only through an email group is told by e-mail, as the group is; named users by their channels.
    const channels = wanted.has(u.id) ? recipients.user_channels : (["email"] as const);
    for (const channel of channels) {
      const recipient = channel === "email" ? u.email.toLowerCase() : u.id;
      add(scope, u.id, { channel, recipient, user_id: u.id, ...(unusable(channel) ? { skip_reason: unusable(channel) } : {}) });
    }
  }
  for (const address of members.filter((m) => !userOf.has(m))) {
    const skip = unusable("email") ?? (!domains.includes(domainOf(address)) ? `${domainOf(address)} is not one of the organization's report domains` : sharedSkip);
    add(shared, row.ownerId, { channel: "email", recipient: address, user_id: null, ...(skip ? { skip_reason: skip } : {}) });
  }
  for (const channel of recipients.channels) {
    const skip = unusable(channel) ?? sharedSkip;
    const recipient = unusable(channel) ? "-" : await channelRecipient(tx, row.orgId, channel);
    add(shared, row.ownerId, { channel, recipient, user_id: null, ...(skip ? { skip_reason: skip } : {}) });
  }
  return [...byScope.values()].filter((s) => s.targets.some((t) => !t.skip_reason));
}
