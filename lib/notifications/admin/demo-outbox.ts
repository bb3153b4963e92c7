import "server-only";
import type { Principal } from "@/lib/auth/roles";
import { findOrganization } from "@/lib/auth/directory";
import { DEMO_ORGS } from "@/lib/db/seed";
import { withTenant } from "@/lib/db/tenant";
import { pageBody, pageWindow, type PageQuery } from "@/lib/pagination";
import { deliveryView, ruleKeys } from "@/lib/notifications/admin/delivery-health";

/**
 * The embedded demo's e-mail channel (issue 32): with no SMTP server offline, the demo's organizations get an e-mail
 * channel whose mail is kept in Quarry, readable by their admins, and never sent. It is seeded with the demo data
 * (QUARRY_SEED_DEMO, on by default) into an organization without an e-mail channel, and replaced for good when an
 * admin saves an SMTP server (the API accepts only SMTP settings, so nothing but the seed makes an outbox).
 */
export const DEMO_OUTBOX_REASON = "kept in the demo outbox";

export const isDemoOutbox = (settings: unknown): boolean => (settings as { demo_outbox?: unknown } | null)?.demo_outbox === true;

/** The reason a delivery kept in the outbox carries (also how the outbox finds its mail). */
export const demoOutboxReason = (attempt: number) => `${DEMO_OUTBOX_REASON} on attempt ${attempt} (the demo's e-mail: nothing was sent)`;

/** The mail the demo outbox kept, newest first: each e-mail delivery with its subject and body. */
export async function listDemoOutbox(principal: Principal, page: PageQuery) {
  const where = { channel: "email", status: "delivered", reason: { startsWith: DEMO_OUTBOX_REASON } };
  return withTenant(principal, async (tx) => {
    const [keys, total, rows] = await Promise.all([
      ruleKeys(tx),
      tx.notificationDelivery.count({ where }),
      tx.notificationDelivery.findMany({ where, orderBy: [{ deliveredAt: "desc" }, { id: "asc" }], ...pageWindow(page) }),
    ]);
    return pageBody(
      rows.map((d) => ({ ...deliveryView(d, keys.get(d.ruleId) ?? ""), body: d.body })),
      total,
      page,
    );
  });
}

/** Gives each demo organization without an e-mail channel the demo outbox; how many got one. */
export async function seedDemoOutbox(now: Date = new Date()): Promise<number> {
  let seeded = 0;
  for (const demo of DEMO_ORGS) {
    const org = await findOrganization(demo.slug);
    if (!org) continue;
    const admin: Principal = { userId: `usr_${org.slug}_admin`, orgId: org.id, orgSlug: org.slug, orgName: org.name, role: "admin", locationIds: null, via: "session" };
    const created = await withTenant(admin, async (tx) => {
      if (await tx.notificationChannelConfig.findUnique({ where: { orgId_kind: { orgId: org.id, kind: "email" } } })) return false;
      await tx.notificationChannelConfig.create({
        data: { orgId: org.id, kind: "email", enabled: true, settings: { demo_outbox: true, from: `alerts@${org.slug}.test` }, secretsEnc: null, updatedBy: null, updatedAt: now },
      });
      return true;
    });
    if (created) seeded += 1;
  }
  return seeded;
}
