import "server-only";
import type { Principal } from "@/lib/auth/roles";
import { findOrganization } from "@/lib/auth/directory";
import { DEMO_ORGS } from "@/lib/db/seed";
import { withTenant } from "@/lib/db/tenant";
import { pageBody, pageWindow, type PageQuery } from "@/lib/pagination";
import { deliveryView, ruleKeys, senderOf } from "@/lib/notifications/admin/delivery-health";

/**
 * The embedded demo's e-mail and Slack (issue 32): offline there is no SMTP server or Slack to reach, so the demo's
 * organizations get e-mail and Slack channels whose messages are kept in Quarry, readable by their admins, and never
 * sent; the spec's example rule (in_app + email + slack), e-mail groups and subscriptions then work end to end. Seeded
 * with the demo data (QUARRY_SEED_DEMO, on by default) for each of the two kinds an organization has not configured,
 * and replaced for good when an admin saves a real provider (the API accepts only real settings, so nothing but the
 * seed makes an outbox).
 */
export const DEMO_OUTBOX_KINDS = ["email", "slack"] as const;
export const DEMO_OUTBOX_REASON = "kept in the demo outbox";

export const isDemoOutbox = (settings: unknown): boolean => (settings as { demo_outbox?: unknown } | null)?.demo_outbox === true;

/** The reason a delivery kept in the outbox carries (also how the outbox finds its mail). */
export const demoOutboxReason = (attempt: number) => `${DEMO_OUTBOX_REASON} on attempt ${attempt} (the demo's channel: nothing was sent)`;

/** What the demo outbox kept, newest first: each e-mail and Slack delivery with its subject and body. */
export async function listDemoOutbox(principal: Principal, page: PageQuery) {
  const where = { channel: { in: [...DEMO_OUTBOX_KINDS] }, status: "delivered", reason: { startsWith: DEMO_OUTBOX_REASON } };
  return withTenant(principal, async (tx) => {
    const [keys, total, rows] = await Promise.all([
      ruleKeys(tx),
      tx.notificationDelivery.count({ where }),
      tx.notificationDelivery.findMany({ where, orderBy: [{ deliveredAt: "desc" }, { id: "asc" }], ...pageWindow(page) }),
    ]);
    return pageBody(
      rows.map((d) => ({ ...deliveryView(d, keys.get(senderOf(d)) ?? ""), body: d.body })),
      total,
      page,
    );
  });
}

/** Gives each demo organization the demo outbox for e-mail and Slack where it has no such channel; how many organizations got one. */
export async function seedDemoOutbox(now: Date = new Date()): Promise<number> {
  let seeded = 0;
  for (const demo of DEMO_ORGS) {
    const org = await findOrganization(demo.slug);
    if (!org) continue;
    const admin: Principal = { userId: `usr_${org.slug}_admin`, orgId: org.id, orgSlug: org.slug, orgName: org.name, role: "admin", locationIds: null, via: "session" };
    const settings = { email: { demo_outbox: true, from: `alerts@${org.slug}.test` }, slack: { demo_outbox: true, mode: "bot", channel: "#alerts" } };
    const created = await withTenant(admin, async (tx) => {
      let made = false;
      for (const kind of DEMO_OUTBOX_KINDS) {
        if (await tx.notificationChannelConfig.findUnique({ where: { orgId_kind: { orgId: org.id, kind } } })) continue;
        await tx.notificationChannelConfig.create({ data: { orgId: org.id, kind, enabled: true, settings: settings[kind], secretsEnc: null, updatedBy: null, updatedAt: now } });
        made = true;
      }
      return made;
    });
    if (created) seeded += 1;
  }
  return seeded;
}
