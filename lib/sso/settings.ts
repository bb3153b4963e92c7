import "server-only";
import { z } from "zod";
import type { Principal } from "@/lib/access/roles";
import { recordAudit } from "@/lib/audit/record";
import { findOrganization } from "@/lib/auth/directory";
import { config } from "@/lib/config";
import { getDb } from "@/lib/db/client";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import { Invalid, notFound, type ValidationItem } from "@/lib/errors";
import { grantableLocations, requireOrganizationAdmin } from "@/lib/members/members";
import { openSecrets, sealSecrets, secretsBinding } from "@/lib/notifications/settings/channel-secrets";
import { RoleMapping, type SaveSsoSettingsBody, type SsoSettings } from "./contract";
import { readIssuer, type IssuerMetadata } from "./issuer";

/** next-auth's provider id of an organization's SSO: `sso-<slug>` (slugs are lower-case letters, digits and hyphens). */
export const providerIdOf = (slug: string) => `sso-${slug}`;
export const slugOfProviderId = (providerId: string) => (/^sso-([a-z0-9-]{1,64})$/.exec(providerId)?.[1] ?? null);

/** The redirect URI the provider must have registered for this organization (next-auth's callback route). */
export const redirectUriOf = (slug: string) => `${config().publicUrl.replace(/\/$/, "")}/api/auth/callback/${providerIdOf(slug)}`;

const binding = (orgId: string) => secretsBinding(orgId, "sso");

/** An organization's SSO as sign-in uses it: the client secret opened. */
export interface SsoConfig {
  orgId: string;
  issuerUrl: string;
  clientId: string;
  clientSecret: string;
  domains: string[];
  roleClaim: string;
  roleMappings: RoleMapping[];
  defaultRole: SsoSettings["default_role"];
  ssoOnly: boolean;
  breakGlassUserIds: string[];
  enabled: boolean;
}

type Row = NonNullable<Awaited<ReturnType<TenantTx["ssoSettings"]["findUnique"]>>>;

async function readRow(tx: TenantTx, orgId: string): Promise<{ row: Row; domains: string[] } | null> {
  const row = await tx.ssoSettings.findUnique({ where: { orgId } });
  if (!row) return null;
  const domains = (await tx.ssoDomain.findMany({ where: { orgId }, orderBy: { domain: "asc" } })).map((d) => d.domain);
  return { row, domains };
}

/** The organization's SSO with its secret opened, under its row-level security; null when none is configured. */
export async function loadSsoConfig(orgId: string): Promise<SsoConfig | null> {
  const found = await withTenant({ orgId }, (tx) => readRow(tx, orgId));
  if (!found) return null;
  const { row, domains } = found;
  return {
    orgId,
    issuerUrl: row.issuerUrl,
    clientId: row.clientId,
    clientSecret: openSecrets(row.clientSecretEnc, binding(orgId)).client_secret,
    domains,
    roleClaim: row.roleClaim,
    roleMappings: z.array(RoleMapping).parse(row.roleMappings),
    defaultRole: row.defaultRole as SsoConfig["defaultRole"],
    ssoOnly: row.ssoOnly,
    breakGlassUserIds: row.breakGlassUserIds,
    enabled: row.enabled,
  };
}

function view(principal: Principal, { row, domains }: { row: Row; domains: string[] }): SsoSettings {
  return {
    issuer_url: row.issuerUrl,
    client_id: row.clientId,
    client_secret_set: true,
    domains,
    role_claim: row.roleClaim,
    role_mappings: z.array(RoleMapping).parse(row.roleMappings),
    default_role: row.defaultRole as SsoSettings["default_role"],
    sso_only: row.ssoOnly,
    break_glass_user_ids: row.breakGlassUserIds,
    enabled: row.enabled,
    provider_id: providerIdOf(principal.orgSlug),
    redirect_uri: redirectUriOf(principal.orgSlug),
    updated_at: row.updatedAt.toISOString(),
  };
}

export async function getSsoSettings(principal: Principal): Promise<SsoSettings> {
  requireOrganizationAdmin(principal);
  const found = await withTenant(principal, (tx) => readRow(tx, principal.orgId));
  if (!found) throw notFound("Single sign-on configuration");
  return view(principal, found);
}

/** Which of the wanted domains another organization of the install holds (read as the connecting role: no tenant sees another's rows). */
async function domainsHeldElsewhere(orgId: string, domains: string[]): Promise<string[]> {
  const { system } = await getDb();
  const rows = await system.query<{ domain: string }>(`SELECT domain FROM sso_domains WHERE domain = ANY($1::text[]) AND org_id <> $2`, [domains, orgId]);
  return rows.map((r) => r.domain);
}

/**
 * Saves the organization's SSO. The issuer is read first (outbound rules, discovery, the same issuer);
 * the secret is sealed to the organization; domains, mapped locations and break-glass admins are checked
 * against what the organization holds, in the same transaction as the write.
 */
export async function saveSsoSettings(principal: Principal, body: SaveSsoSettingsBody): Promise<SsoSettings> {
  requireOrganizationAdmin(principal);
  const issues: ValidationItem[] = [];
  const issuer: IssuerMetadata | string = await readIssuer(body.issuer_url).catch((error: Error) => error.message);
  if (typeof issuer === "string") issues.push({ loc: ["body", "issuer_url"], msg: issuer, type: "value_error" });
  const taken = await domainsHeldElsewhere(principal.orgId, body.domains);
  // Same words whoever holds it: which organization does is not this admin's to know.
  if (taken.length > 0) issues.push({ loc: ["body", "domains"], msg: `Already used for single sign-on on this server: ${taken.join(", ")}`, type: "value_error" });
  if (body.sso_only && body.break_glass_user_ids.length === 0) {
    issues.push({ loc: ["body", "break_glass_user_ids"], msg: "SSO only needs at least one break-glass admin who keeps a password", type: "value_error" });
  }
  if (issues.length > 0) throw new Invalid(issues);
  const saved = await withTenant(principal, async (tx) => {
    for (const [i, mapping] of body.role_mappings.entries()) await grantableLocations(tx, mapping.location_ids, ["body", "role_mappings", String(i), "location_ids"]);
    const admins = await tx.user.findMany({ where: { id: { in: body.break_glass_user_ids }, role: "admin", status: "active", locationIds: { isEmpty: true } }, select: { id: true } });
    const notAdmins = body.break_glass_user_ids.filter((id) => !admins.some((a) => a.id === id));
    if (notAdmins.length > 0) throw new Invalid([{ loc: ["body", "break_glass_user_ids"], msg: `Not active admins of every location: ${notAdmins.join(", ")}`, type: "value_error" }]);
    const current = await readRow(tx, principal.orgId);
    const existing = current?.row;
    if (!existing && !body.client_secret) throw new Invalid([{ loc: ["body", "client_secret"], msg: "Required the first time", type: "missing" }]);
    const data = {
      issuerUrl: body.issuer_url,
      clientId: body.client_id,
      clientSecretEnc: body.client_secret ? sealSecrets({ client_secret: body.client_secret }, binding(principal.orgId)) : existing!.clientSecretEnc,
      roleClaim: body.role_claim,
      roleMappings: body.role_mappings,
      defaultRole: body.default_role,
      ssoOnly: body.sso_only,
      breakGlassUserIds: body.break_glass_user_ids,
      enabled: body.enabled,
      updatedAt: new Date(),
    };
    await tx.ssoSettings.upsert({ where: { orgId: principal.orgId }, create: { orgId: principal.orgId, ...data }, update: data });
    await tx.ssoDomain.deleteMany({ where: { orgId: principal.orgId } });
    await tx.ssoDomain.createMany({ data: body.domains.map((domain) => ({ domain, orgId: principal.orgId })) });
    const saved = (await readRow(tx, principal.orgId))!;
    // The views carry no secret (client_secret_set only); a changed secret shows as a changed updated_at.
    await recordAudit(tx, { actor: principal, action: "sso.update", target: { id: null, name: "Single sign-on" }, before: current ? view(principal, current) : null, after: view(principal, saved) });
    return saved;
  }).catch((error: unknown) => {
    // Another organization took a domain between the check and the write (sso_domains' primary key).
    if ((error as { code?: unknown })?.code === "P2002") throw new Invalid([{ loc: ["body", "domains"], msg: "A domain is already used for single sign-on on this server", type: "value_error" }]);
    throw error;
  });
  return view(principal, saved);
}

export async function deleteSsoSettings(principal: Principal): Promise<void> {
  requireOrganizationAdmin(principal);
  await withTenant(principal, async (tx) => {
    const current = await readRow(tx, principal.orgId);
    if (!current) throw notFound("Single sign-on configuration");
    await tx.ssoSettings.delete({ where: { orgId: principal.orgId } });
    await recordAudit(tx, { actor: principal, action: "sso.update", target: { id: null, name: "Single sign-on" }, before: view(principal, current), after: null });
  });
}

/**
 * The provider for an e-mail address's domain or an organization's slug, before anyone signs in. It reads
 * the connecting role's view (as lib/auth/directory.ts does for sign-in) and depends on the domain or slug
 * only, never on whether an account exists.
 */
export async function discoverSso(input: string): Promise<{ provider_id: string; organization_name: string } | null> {
  const text = input.trim().toLowerCase();
  const { system } = await getDb();
  let orgId: string | null = null;
  if (text.includes("@")) {
    const domain = text.slice(text.lastIndexOf("@") + 1);
    orgId = (await system.query<{ org_id: string }>(`SELECT org_id FROM sso_domains WHERE domain = $1`, [domain]))[0]?.org_id ?? null;
  } else {
    orgId = (await findOrganization(text))?.id ?? null;
  }
  if (!orgId) return null;
  const rows = await system.query<{ slug: string; name: string }>(
    `SELECT o.slug, o.name FROM sso_settings s JOIN organizations o ON o.id = s.org_id WHERE s.org_id = $1 AND s.enabled`,
    [orgId],
  );
  return rows[0] ? { provider_id: providerIdOf(rows[0].slug), organization_name: rows[0].name } : null;
}
