import "server-only";
import type { z } from "zod";
import { isDeepStrictEqual } from "node:util";
import type { Principal } from "@/lib/access/roles";
import type { TenantTx } from "@/lib/db/tenant";
import type { Prisma } from "@/lib/db/generated/client";
import { newId } from "@/lib/ids";
import type { ManifestAlert } from "@/lib/manifest/alert";
import { AlertDefinition, type alertDeclarationFields } from "@/lib/manifest/alert";

/**
 * Alerts declared in a dashboard manifest (`spec.alerts`, issue 45 §1), kept in line with its published version:
 * publishing (dashboard-writes.ts) calls syncManifestAlerts in its transaction. The alerts themselves (evaluation,
 * state, the service) are lib/alerts, which sits above dashboards and reads these rows; this file writes them from
 * the manifest language alone, so the dashboards' write path needs nothing of lib/alerts.
 */

/** An alert's declaration, as the manifest and the API carry it (defaults applied). */
export type Declaration = z.output<z.ZodObject<typeof alertDeclarationFields>>;

/** The row columns of a declaration. */
export function declarationColumns(d: Declaration) {
  const { name, widget_id, cadence, ...definition } = d;
  return {
    name,
    widgetId: widget_id,
    definition: AlertDefinition.parse(definition) as Prisma.InputJsonValue,
    cadenceKind: cadence.kind,
    cron: cadence.kind === "cron" ? cadence.cron.trim() : null,
  };
}

/** Who outside recipients are, as an approval covers them: an editor who changes them resets it. */
export const outsideRecipients = (definition: AlertDefinition) => ({ groups: [...definition.recipients.group_ids].sort(), channels: [...definition.recipients.channels].sort() });

/**
 * Brings a dashboard's manifest-declared alerts in line with its published manifest (`spec.alerts`), in `tx`: new ids
 * are created (owned by `principal`, who pushed), declared ones updated in place (their switches and states kept),
 * those no longer declared deleted. Answers the ids created, updated and deleted (what a plan shows).
 */
export async function syncManifestAlerts(tx: TenantTx, principal: Principal, dashboardId: string, declared: readonly ManifestAlert[], now: Date) {
  const existing = await tx.widgetAlert.findMany({ where: { dashboardId, manifestId: { not: null } } });
  const byManifestId = new Map(existing.map((r) => [r.manifestId!, r]));
  const result = { created: [] as string[], updated: [] as string[], deleted: [] as string[] };
  for (const alert of declared) {
    const { id: manifestId, ...declaration } = alert;
    const columns = declarationColumns(declaration);
    const row = byManifestId.get(manifestId);
    if (!row) {
      await tx.widgetAlert.create({
        data: { id: newId("wal"), orgId: principal.orgId, dashboardId, manifestId, ...columns, ownerId: principal.userId, sharedRole: principal.role, sharedLocationIds: [...new Set(principal.locationIds ?? [])].sort(), createdAt: now, updatedAt: now },
      });
      result.created.push(manifestId);
      continue;
    }
    const same = row.name === columns.name && row.widgetId === columns.widgetId && row.cadenceKind === columns.cadenceKind && row.cron === columns.cron && isDeepStrictEqual(row.definition, columns.definition);
    if (same) continue;
    const outsideChanged = !isDeepStrictEqual(outsideRecipients(AlertDefinition.parse(row.definition)), outsideRecipients(AlertDefinition.parse(columns.definition)));
    await tx.widgetAlert.update({ where: { id: row.id }, data: { ...columns, updatedAt: now, ...(outsideChanged ? { sharedApprovedBy: null, sharedApprovedVersion: null } : {}) } });
    result.updated.push(manifestId);
  }
  const kept = new Set(declared.map((a) => a.id));
  const gone = existing.filter((r) => !kept.has(r.manifestId!));
  if (gone.length > 0) await tx.widgetAlert.deleteMany({ where: { id: { in: gone.map((r) => r.id) } } });
  result.deleted.push(...gone.map((r) => r.manifestId!));
  return result;
}
