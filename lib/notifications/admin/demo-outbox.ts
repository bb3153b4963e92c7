import "server-only";
import type { Principal } from "@/lib/access/roles";
import { findOrganization } from "@/lib/auth/directory";
import { DEMO_ORGS } from "@/lib/demo/seed";
import { withTenant } from "@/lib/db/tenant";
import { pageBody, pageWindow, type PageQuery } from "@/lib/pagination";
import { deliveryView, ruleKeys, senderOf } from "@/lib/notifications/admin/delivery-health";
import { DEMO_OUTBOX_KINDS, DEMO_OUTBOX_REASON } from "@/lib/notifications/transports/outbox-channel";

// The demo outbox (issue 32) and what marks it: transports/outbox-channel.ts.

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
      // An account e-mail (lib/members/mail.ts) has no rule or schedule: it is named by what it is.
      rows.map((d) => ({ ...deliveryView(d, d.accountMail ? `account: ${d.accountMail}` : (keys.get(senderOf(d)) ?? "")), body: d.body })),
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
