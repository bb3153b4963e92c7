import "server-only";
import type { Principal } from "@/lib/access/roles";
import { notificationsConfig } from "@/lib/config/notifications";
import { recordAudit } from "@/lib/audit/record";
import { withTenant } from "@/lib/db/tenant";
import { unprocessable, zodIssuesToItems } from "@/lib/errors";
import { CHANNEL_INPUTS, ChannelKind, SECRET_FIELDS, requiredSecrets } from "@/lib/notifications/channel-kinds";
import { maskSecret, openSecrets, sealSecrets, secretsBinding } from "@/lib/notifications/settings/channel-secrets";
import { UnsafeTargetError, assertPublicHost, assertSafeUrl } from "@/lib/notifications/transports/url-guard";

function view(kind: ChannelKind, row: { enabled: boolean; settings: unknown; secretsEnc: string | null; updatedAt: Date; updatedBy: string | null } | undefined, orgId: string) {
  if (kind === "in_app") {
    return { kind, configured: true, enabled: row?.enabled ?? true, config: {}, updated_at: row?.updatedAt ?? null, updated_by: row?.updatedBy ?? null };
  }
  if (!row) return { kind, configured: false, enabled: false, config: {}, updated_at: null, updated_by: null };
  const secrets = row.secretsEnc ? openSecrets(row.secretsEnc, secretsBinding(orgId, kind)) : {};
  const masked = Object.fromEntries(Object.entries(secrets).map(([k, v]) => [k, maskSecret(v)]));
  return { kind, configured: true, enabled: row.enabled, config: { ...(row.settings as Record<string, unknown>), ...masked }, updated_at: row.updatedAt, updated_by: row.updatedBy };
}

export async function listChannelConfigs(principal: Principal) {
  const rows = await withTenant(principal, (tx) => tx.notificationChannelConfig.findMany());
  const byKind = new Map(rows.map((r) => [r.kind, r]));
  return { items: ChannelKind.options.map((kind) => view(kind, byKind.get(kind), principal.orgId)) };
}

/**
 * Validates and stores one channel provider. Secret fields left out keep their
 * stored value; URLs and SMTP hosts must not point inward (SSRF) unless allow-listed.
 */
export async function putChannelConfig(principal: Principal, kind: ChannelKind, body: { enabled: boolean; config: Record<string, unknown> }) {
  const parsed = CHANNEL_INPUTS[kind].safeParse(body.config);
  if (!parsed.success) throw unprocessable(zodIssuesToItems("body", parsed.error).map((i) => ({ ...i, loc: ["body", "config", ...i.loc.slice(1)] })));
  const input = parsed.data as Record<string, unknown>;
  await checkTargets(kind, input);

  const secretNames = SECRET_FIELDS[kind];
  const settings = Object.fromEntries(Object.entries(input).filter(([k, v]) => !secretNames.includes(k) && v !== undefined));
  const given = Object.fromEntries(Object.entries(input).filter(([k, v]) => secretNames.includes(k) && typeof v === "string")) as Record<string, string>;

  const saved = await withTenant(principal, async (tx) => {
    const existing = await tx.notificationChannelConfig.findUnique({ where: { orgId_kind: { orgId: principal.orgId, kind } } });
    const stored = existing?.secretsEnc ? openSecrets(existing.secretsEnc, secretsBinding(principal.orgId, kind)) : {};
    const merged = { ...stored, ...given };
    // A slack channel switching mode drops the other mode's secret.
    if (kind === "slack") for (const name of secretNames) if (!requiredSecrets(kind, settings).includes(name)) delete merged[name];
    const missing = requiredSecrets(kind, settings).filter((name) => !merged[name]);
    if (missing.length > 0) {
      throw unprocessable(missing.map((name) => ({ loc: ["body", "config", name], msg: "Field required (no stored value to keep)", type: "missing" })));
    }
    const data = {
      enabled: body.enabled,
      settings: settings as object,
      secretsEnc: Object.keys(merged).length > 0 ? sealSecrets(merged, secretsBinding(principal.orgId, kind)) : null,
      updatedBy: principal.userId,
      updatedAt: new Date(),
    };
    const written = await tx.notificationChannelConfig.upsert({ where: { orgId_kind: { orgId: principal.orgId, kind } }, create: { orgId: principal.orgId, kind, ...data }, update: data });
    // Secrets are masked in the log: which of them were given anew is what it can say of them.
    await recordAudit(tx, { actor: principal, action: "channel.update", target: { id: kind, name: kind }, before: existing ? view(kind, existing, principal.orgId) : null, after: { ...view(kind, written, principal.orgId), secrets_given: Object.keys(given) }, secretFields: secretNames });
    return written;
  });
  return view(kind, saved, principal.orgId);
}

async function checkTargets(kind: ChannelKind, input: Record<string, unknown>) {
  const where = (field: string) => ["body", "config", field];
  try {
    if (kind === "email") await assertPublicHost(String(input.host));
    if (kind === "webhook") await assertSafeUrl(String(input.url));
  } catch (error) {
    if (error instanceof UnsafeTargetError) throw unprocessable([{ loc: where(kind === "email" ? "host" : "url"), msg: error.message, type: "unsafe_target" }]);
    throw error;
  }
  if (kind === "slack" && typeof input.webhook_url === "string") {
    const url = new URL(input.webhook_url);
    const cfg = notificationsConfig();
    const slackHost = url.protocol === "https:" && cfg.slack_webhook_hosts.includes(url.hostname.toLowerCase());
    if (!slackHost) {
      try {
        // Only an allow-listed host (a test double, a proxy) may stand in for Slack.
        if (!cfg.url_allow_list.includes(url.hostname.toLowerCase())) throw new UnsafeTargetError(`Slack webhook URLs must be https on ${cfg.slack_webhook_hosts.join(", ")}`);
        await assertSafeUrl(input.webhook_url);
      } catch (error) {
        if (error instanceof UnsafeTargetError) throw unprocessable([{ loc: where("webhook_url"), msg: error.message, type: "unsafe_target" }]);
        throw error;
      }
    }
  }
}
