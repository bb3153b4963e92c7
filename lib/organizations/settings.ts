import "server-only";
import type { Principal } from "@/lib/access/roles";
import { recordAudit } from "@/lib/audit/record";
import { findOrganization } from "@/lib/auth/directory";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import type { OrganizationSettingsBody } from "./contract";

interface SettingsRow {
  image_origins: string[];
  index_on_upload: boolean;
  report_allowed_domains: string[];
  updated_at: Date | null;
}

const view = (row: SettingsRow | undefined) => ({
  image_origins: row?.image_origins ?? [],
  index_on_upload: row?.index_on_upload ?? true,
  report_allowed_domains: row?.report_allowed_domains ?? [],
  updated_at: row?.updated_at ?? null,
});

const readRow = async (tx: TenantTx) =>
  (await tx.$queryRaw<SettingsRow[]>`SELECT image_origins, index_on_upload, report_allowed_domains, updated_at FROM organization_settings`)[0];

/** E-mail domains scheduled reports may go to beyond the organization's users (migration 0034; no row: none). */
export async function reportAllowedDomains(tx: TenantTx): Promise<string[]> {
  return (await readRow(tx))?.report_allowed_domains ?? [];
}

/** Whether an upload queues its file's indexing in this organization (issue 28 §1; no row: yes). */
export async function indexOnUpload(tx: TenantTx): Promise<boolean> {
  return (await readRow(tx))?.index_on_upload ?? true;
}

export async function getOrganizationSettings(principal: Principal) {
  return view(await withTenant(principal, readRow));
}

/** Replaces the organization's settings (migration 0030); the row is made on first save. */
export async function putOrganizationSettings(principal: Principal, body: OrganizationSettingsBody) {
  const origins = [...new Set(body.image_origins)];
  const domains = body.report_allowed_domains && [...new Set(body.report_allowed_domains)];
  const row = await withTenant(principal, async (tx) => {
    const before = await readRow(tx);
    await tx.$executeRaw`
      INSERT INTO organization_settings (org_id, image_origins, index_on_upload, report_allowed_domains, updated_by, updated_at)
      VALUES (${principal.orgId}, ${origins}::text[], ${body.index_on_upload ?? true}, ${domains ?? []}::text[], ${principal.userId}, now())
      ON CONFLICT (org_id) DO UPDATE SET image_origins = EXCLUDED.image_origins, updated_by = EXCLUDED.updated_by, updated_at = EXCLUDED.updated_at,
        index_on_upload = coalesce(${body.index_on_upload ?? null}::boolean, organization_settings.index_on_upload),
        report_allowed_domains = coalesce(${domains ?? null}::text[], organization_settings.report_allowed_domains)`;
    const after = await readRow(tx);
    await recordAudit(tx, { actor: principal, action: "organization.update", target: { id: principal.orgId, name: principal.orgName }, before: view(before), after: view(after) });
    return after;
  });
  imageOriginCache.delete(principal.orgId);
  return view(row);
}

/** How long a replica keeps an organization's image origins (each page asks for them in the request gate). */
const CACHE_MS = 5_000;
const imageOriginCache = new Map<string, { origins: readonly string[]; until: number }>();

/**
 * The image origins of an organization (by id or slug) for its pages' Content-Security-Policy;
 * none for an unknown organization. Cached for a few seconds per replica.
 */
export async function imageOriginsOf(orgIdOrSlug: string): Promise<readonly string[]> {
  const hit = imageOriginCache.get(orgIdOrSlug);
  if (hit && hit.until > Date.now()) return hit.origins;
  const org = await findOrganization(orgIdOrSlug);
  const origins = org ? (await withTenant({ orgId: org.id }, readRow))?.image_origins ?? [] : [];
  if (imageOriginCache.size > 1000) imageOriginCache.clear();
  for (const key of new Set([orgIdOrSlug, org?.id ?? orgIdOrSlug])) imageOriginCache.set(key, { origins, until: Date.now() + CACHE_MS });
  return origins;
}
