import "server-only";
import type { TenantTx } from "@/lib/db/tenant";
import { ChannelKind } from "@/lib/notifications/channel-kinds";
import { openSecrets, secretsBinding } from "@/lib/notifications/settings/channel-secrets";
import type { ResolvedChannel } from "@/lib/notifications/transports/send";

/** The stored channel for sending, secrets opened; `in_app` resolves even when never saved. */
export async function resolveChannel(tx: TenantTx, orgId: string, kind: ChannelKind): Promise<ResolvedChannel | null> {
  const row = await tx.notificationChannelConfig.findUnique({ where: { orgId_kind: { orgId, kind } } });
  if (kind === "in_app") return { kind, enabled: row?.enabled ?? true, settings: {}, secrets: {} };
  if (!row) return null;
  return { kind, enabled: row.enabled, settings: row.settings as Record<string, unknown>, secrets: row.secretsEnc ? openSecrets(row.secretsEnc, secretsBinding(orgId, kind)) : {} };
}

/** Kinds that can deliver right now (configured and enabled). */
export async function usableKinds(tx: TenantTx): Promise<Set<ChannelKind>> {
  const rows = await tx.notificationChannelConfig.findMany({ select: { kind: true, enabled: true } });
  const usable = new Set<ChannelKind>(["in_app"]);
  for (const row of rows) {
    const kind = ChannelKind.parse(row.kind);
    if (row.enabled) usable.add(kind);
    else if (kind === "in_app") usable.delete(kind);
  }
  return usable;
}
