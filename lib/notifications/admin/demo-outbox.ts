import "server-only";
import type { Principal } from "@/lib/access/roles";
import { findOrganization } from "@/lib/auth/directory";
import { DEMO_ORGS } from "@/lib/demo/seed";
import { withTenant } from "@/lib/db/tenant";
import { notFound } from "@/lib/errors";
import { storedFileResponse } from "@/lib/file-response";
import { pageBody, pageWindow, type PageQuery } from "@/lib/pagination";
import { deliveryView, ruleKeys, senderOf } from "@/lib/notifications/admin/delivery-health";
import { DEMO_OUTBOX_KINDS, DEMO_OUTBOX_REASON } from "@/lib/notifications/transports/outbox-channel";

// The demo outbox (issue 32) and what marks it: transports/outbox-channel.ts.

const OUTBOX = { channel: { in: [...DEMO_OUTBOX_KINDS] }, status: "delivered", reason: { startsWith: DEMO_OUTBOX_REASON } };

/**
 * A report rendered for one scope may show locations a location-limited admin does not see: its files are listed
 * and opened for admins of every location only.
 */
const seesEveryScope = (principal: Principal) => principal.locationIds === null;

/** What the demo outbox kept, newest first: each e-mail and Slack delivery with its subject, body and a report's files. */
export async function listDemoOutbox(principal: Principal, page: PageQuery) {
  return withTenant(principal, async (tx) => {
    const [keys, total, rows] = await Promise.all([
      ruleKeys(tx),
      tx.notificationDelivery.count({ where: OUTBOX }),
      tx.notificationDelivery.findMany({ where: OUTBOX, orderBy: [{ deliveredAt: "desc" }, { id: "asc" }], ...pageWindow(page) }),
    ]);
    const runIds = seesEveryScope(principal) ? [...new Set(rows.flatMap((d) => (d.reportRunId ? [d.reportRunId] : [])))] : [];
    const files = runIds.length
      ? await tx.reportFile.findMany({ where: { runId: { in: runIds } }, select: { id: true, runId: true, scopeKey: true, filename: true, contentType: true, pages: true }, orderBy: { format: "asc" } })
      : [];
    return pageBody(
      rows.map((d) => ({
        // An account e-mail (lib/members/mail.ts) has no rule or schedule: it is named by what it is.
        ...deliveryView(d, d.accountMail ? `account: ${d.accountMail}` : (keys.get(senderOf(d)) ?? "")),
        body: d.body,
        attachments: files
          .filter((f) => f.runId === d.reportRunId && f.scopeKey === d.reportScope)
          .map((f) => ({ file_id: f.id, filename: f.filename, content_type: f.contentType, pages: f.pages })),
      })),
      total,
      page,
    );
  });
}

/** One file of a report e-mail the outbox kept, as the e-mail would attach it (404 unless it is that delivery's own). */
export async function openDemoOutboxAttachment(principal: Principal, deliveryId: string, fileId: string): Promise<Response> {
  const file = seesEveryScope(principal)
    ? await withTenant(principal, async (tx) => {
        const delivery = await tx.notificationDelivery.findFirst({ where: { ...OUTBOX, id: deliveryId }, select: { reportRunId: true, reportScope: true } });
        if (!delivery?.reportRunId || delivery.reportScope === null) return null;
        return tx.reportFile.findFirst({ where: { id: fileId, runId: delivery.reportRunId, scopeKey: delivery.reportScope } });
      })
    : null;
  if (!file) throw notFound("Attachment");
  return storedFileResponse(file, "attachment");
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
