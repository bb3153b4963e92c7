import "server-only";
import { findOrganization } from "@/lib/auth/directory";
import type { Principal } from "@/lib/auth/roles";
import { withTenant, type TenantScope } from "@/lib/db/tenant";
import { forbidden, notFound } from "@/lib/errors";
import type { EmbedGrant } from "./embeds";
import { parseManifestCached, servedManifest, type ManifestResult, type ValidManifest } from "./manifest";

/**
 * The one access policy of dashboards: for a signed-in principal, an embed grant or an anonymous
 * public viewer, which version of a dashboard may be seen, and under which organization and
 * location scope its data is read. Services, pages, previews, embeds and public links all ask
 * here; the database's row-level security then filters by the scope handed to withTenant.
 *
 * - Editors (admin, general manager) see drafts and any version; viewers see the current
 *   published version only, when its `platform.roles` lists their role.
 * - A principal reads under its own location scope.
 * - An embed reads the version it was made for, under its creator's scope (stored in the grant),
 *   so a general manager's preview shows what the embed shows.
 * - A public link reads the current published version while it says `platform.public: true`,
 *   under its publisher's scope.
 */

export const EDITOR_ROLES = new Set(["admin", "general_manager"]);
export const isEditor = (principal: Principal) => EDITOR_ROLES.has(principal.role);

/** Whether a principal may view a manifest: editors always, others when platform.roles includes their role. */
export function viewerMayOpen(principal: Principal, manifest: ValidManifest): boolean {
  return isEditor(principal) || manifest.manifest.platform.roles.includes(principal.role);
}

/** The data scope of a location list as stored with grants and versions (empty: every location). */
function scopeOf(orgId: string, locationIds: readonly string[] | null | undefined): TenantScope {
  return { orgId, locationIds: locationIds && locationIds.length > 0 ? [...locationIds] : null };
}

export const principalScope = (principal: Principal): TenantScope => scopeOf(principal.orgId, principal.locationIds);
export const embedScope = (grant: EmbedGrant): TenantScope => scopeOf(grant.orgId, grant.locationIds);

/** Which version a caller asks for: the published one, the draft, or a number. */
export type WantedVersion = "published" | "draft" | number;

/** What the policy grants: one version of one dashboard, read under one scope. */
export interface GrantedDashboard {
  dashboardId: string;
  slug: string;
  name: string;
  version: number | "draft";
  /** The draft's revision (it keys cached draft results). */
  draftRevision: number;
  yaml: string;
  /** The parse of `yaml` as served (no parked widgets); not ok only for stored manifests that no longer validate. */
  parsed: ManifestResult;
  scope: TenantScope;
}

const dashboardColumns = { id: true, slug: true, name: true, draftYaml: true, draftRevision: true, publishedVersion: true } as const;

/**
 * The version a principal may see of a dashboard (id or slug) and the scope to read it under.
 * Throws 404 for anything the principal may not see (missing and hidden look the same) and 403
 * for a viewer asking for the draft.
 */
export async function grantForPrincipal(principal: Principal, idOrSlug: string, wanted: WantedVersion): Promise<GrantedDashboard> {
  const editor = isEditor(principal);
  const shown = await withTenant(principal, async (tx) => {
    const row = await tx.dashboard.findFirst({ where: { OR: [{ id: idOrSlug }, { slug: idOrSlug }] }, select: dashboardColumns });
    if (!row) throw notFound("Dashboard");
    if (wanted === "draft") {
      if (!editor) throw forbidden("Only editors may query the draft");
      return { row, name: row.name, yaml: row.draftYaml, version: "draft" as const };
    }
    const versionNo = wanted === "published" ? row.publishedVersion : wanted;
    if (versionNo === null) {
      if (editor) return { row, name: row.name, yaml: row.draftYaml, version: "draft" as const };
      throw notFound("Dashboard");
    }
    // Viewers see the current published version only: an older one may still list a role that was since removed.
    if (!editor && versionNo !== row.publishedVersion) throw notFound("Dashboard version");
    const v = await tx.dashboardVersion.findUnique({ where: { dashboardId_version: { dashboardId: row.id, version: versionNo } }, select: { specYaml: true, name: true, version: true } });
    if (!v) throw notFound("Dashboard version");
    return { row, name: v.name, yaml: v.specYaml, version: v.version };
  });
  const parsed = servedManifest(parseManifestCached(shown.yaml));
  if (parsed.ok && !viewerMayOpen(principal, parsed.value)) throw notFound("Dashboard");
  return {
    dashboardId: shown.row.id,
    slug: shown.row.slug,
    name: shown.name,
    version: shown.version,
    draftRevision: shown.row.draftRevision,
    yaml: shown.yaml,
    parsed,
    scope: principalScope(principal),
  };
}

/** The version an embed grant is bound to, under its creator's location scope. */
export async function grantForEmbed(grant: EmbedGrant): Promise<GrantedDashboard> {
  const v = await withTenant({ orgId: grant.orgId }, (tx) =>
    tx.dashboardVersion.findUnique({
      where: { dashboardId_version: { dashboardId: grant.dashboardId, version: grant.version } },
      select: { specYaml: true, name: true, dashboard: { select: { slug: true, draftRevision: true } } },
    }),
  );
  if (!v) throw notFound("Dashboard");
  return {
    dashboardId: grant.dashboardId,
    slug: v.dashboard.slug,
    name: v.name,
    version: grant.version,
    draftRevision: v.dashboard.draftRevision,
    yaml: v.specYaml,
    parsed: servedManifest(parseManifestCached(v.specYaml)),
    scope: embedScope(grant),
  };
}

/**
 * The current published version of an organization's dashboard when it is public, under its
 * publisher's location scope; null for anything else (no such organization or dashboard, not
 * published, not public), so a public URL cannot tell a private dashboard from a missing one.
 */
export async function grantForPublic(orgSlug: string, dashboardSlug: string): Promise<GrantedDashboard | null> {
  const org = await findOrganization(orgSlug);
  if (!org || org.slug !== orgSlug) return null;
  const shown = await withTenant({ orgId: org.id }, async (tx) => {
    const row = await tx.dashboard.findFirst({ where: { slug: dashboardSlug }, select: { id: true, slug: true, draftRevision: true, publishedVersion: true } });
    if (!row?.publishedVersion) return null;
    const v = await tx.dashboardVersion.findUnique({
      where: { dashboardId_version: { dashboardId: row.id, version: row.publishedVersion } },
      select: { specYaml: true, name: true, version: true, publisherLocationIds: true },
    });
    return v ? { row, v } : null;
  });
  if (!shown) return null;
  const parsed = servedManifest(parseManifestCached(shown.v.specYaml));
  if (!parsed.ok || !parsed.value.manifest.platform.public) return null;
  return {
    dashboardId: shown.row.id,
    slug: shown.row.slug,
    name: shown.v.name,
    version: shown.v.version,
    draftRevision: shown.row.draftRevision,
    yaml: shown.v.specYaml,
    parsed,
    scope: scopeOf(org.id, shown.v.publisherLocationIds),
  };
}
