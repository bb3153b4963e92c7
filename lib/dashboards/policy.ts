import "server-only";
import { withOwnTables } from "@/lib/db/own-tables";
import { findOrganization } from "@/lib/auth/directory";
import { Role, type Principal } from "@/lib/access/roles";
import { withTenant, type TenantScope, type TenantTx } from "@/lib/db/tenant";
import { type MemberAttributes, readAttributes } from "@/lib/access/attributes";
import { ANONYMOUS_VIEWER, type FieldViewer } from "@/lib/query/field-policy";
import { forbidden, notFound } from "@/lib/errors";
import { ManifestSource } from "@/lib/manifest/source";
import { isSeq } from "yaml";
import { EDITORS } from "./contract";
import type { OrgLocale } from "./format";
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
 * - A stored manifest that no longer validates is granted by the same rules, its roles and public
 *   flag read from its YAML (storedPlatform); `parsed` then carries its errors, and pages and
 *   queries say it cannot be shown (docs/dashboards-viewer.md).
 */

const EDITOR_ROLES: ReadonlySet<Role> = new Set(EDITORS);
export const isEditor = (principal: Principal) => EDITOR_ROLES.has(principal.role);

/**
 * Publishing as a side effect of another operation (a restore, an apply with `publish`), whose endpoint
 * requires only `dashboards:write` of a key: the caller must be an editor and, for an API key, hold
 * `dashboards:publish` as the publish endpoint itself requires.
 */
export function assertMayPublish(principal: Principal): void {
  if (!isEditor(principal)) throw forbidden("Only admins and general managers may publish");
  if (principal.via === "api_key" && !principal.scopes?.includes("dashboards:publish")) {
    throw forbidden("Publishing requires an API key with the scope 'dashboards:publish'");
  }
}

/** Whether a principal may view a manifest: editors always, others when platform.roles includes their role. */
export function viewerMayOpen(principal: Principal, manifest: ValidManifest): boolean {
  return isEditor(principal) || manifest.manifest.platform.roles.includes(principal.role);
}

/**
 * `platform.roles`, `public` and `allow_embed` of a stored manifest that no longer validates (rules were
 * tightened after it was saved), read from its YAML alone, so the policy still knows who may learn
 * that it exists. Fails closed: roles that cannot be read allow no one, public is only a literal `true`.
 */
export function storedPlatform(yaml: string): { roles: string[]; public: boolean; allow_embed: boolean } {
  const { source, errors } = ManifestSource.parse(yaml);
  const first = errors.length === 0 ? source.documents.find((doc) => doc.contents !== null) : undefined;
  if (!first) return { roles: [], public: false, allow_embed: false };
  const roles = first.getIn(["platform", "roles"], true);
  const listed = roles === undefined ? [...Role.options] : isSeq(roles) ? roles.toJSON().filter((r: unknown): r is string => typeof r === "string") : [];
  return { roles: listed, public: first.getIn(["platform", "public"]) === true, allow_embed: first.getIn(["platform", "allow_embed"]) === true };
}

/** All an embed or public viewer learns of a dashboard whose stored manifest no longer validates. */
export const UNAVAILABLE_TO_ANONYMOUS = "This dashboard is temporarily unavailable";

/** What a signed-in viewer (not an editor) learns of it: no problems, since they name the SQL's functions and tables. */
export const UNPASSABLE_TO_VIEWERS = "This dashboard no longer passes Quarry's checks; ask an editor (an admin or general manager) to fix it";

/** Whether a principal may learn of a stored manifest, valid or not (for one that no longer validates, by its stored roles). */
function principalMayOpen(principal: Principal, parsed: ManifestResult, yaml: string): boolean {
  if (parsed.ok) return viewerMayOpen(principal, parsed.value);
  return isEditor(principal) || storedPlatform(yaml).roles.includes(principal.role);
}

/** The data scope of a location list as stored with grants and versions (empty: every location). */
function scopeOf(orgId: string, locationIds: readonly string[] | null | undefined): TenantScope {
  return { orgId, locationIds: locationIds && locationIds.length > 0 ? [...locationIds] : null };
}

/** What a verified embed token grants (lib/dashboards/embeds.ts signs and verifies it). */
export interface EmbedGrant {
  embedId: string;
  orgId: string;
  dashboardId: string;
  version: number;
  lockedFilters: Record<string, unknown>;
  allowedOrigins: string[];
  /** The creator's location scope, which the embed's data is read under (empty: every location). */
  locationIds: string[];
  expiresAt: Date;
  /** The report downloads the dashboard's current published manifest offers (`platform.downloads`): an embed's page offers a format only while this says so too. */
  downloads: { pdf: boolean; png: boolean };
  /** Member attributes signed into the token (`att`), for the datasets' field policies; an embed has no role. */
  attributes: MemberAttributes;
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
  /** The parse of `yaml` as served (no parked widgets); not ok only for stored manifests that no longer validate (never shown, never queried). */
  parsed: ManifestResult;
  scope: TenantScope;
  /** Who looks, for the datasets' field policies (lib/query/field-policy.ts): a principal's role and attributes, an embed's signed attributes, nobody for a public link. */
  viewer: FieldViewer;
  /** The organization's time zone and currency when granting had to read the organization anyway (a public link, by its slug); otherwise read once by whoever needs them (grantedLocale). */
  locale?: OrgLocale;
}

const dashboardColumns = { id: true, slug: true, name: true, draftYaml: true, draftRevision: true, publishedVersion: true } as const;

/** A principal's member attributes (users.attributes); none for an API key, which is no member. */
export async function memberAttributes(tx: TenantTx, principal: Principal): Promise<MemberAttributes> {
  if (principal.via === "api_key") return {};
  const member = await tx.user.findUnique({ where: { id: principal.userId }, select: { attributes: true } });
  return readAttributes(member?.attributes);
}

/**
 * The version a principal may see of a dashboard (id or slug) and the scope to read it under.
 * Throws 404 for anything the principal may not see (missing and hidden look the same) and 403
 * for a viewer asking for the draft.
 */
export async function grantForPrincipal(principal: Principal, idOrSlug: string, wanted: WantedVersion): Promise<GrantedDashboard> {
  const editor = isEditor(principal);
  let attributes: MemberAttributes = {};
  const shown = await withTenant(principal, async (tx) => {
    attributes = await memberAttributes(tx, principal);
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
  const parsed = await withOwnTables(principal.orgId, async () => servedManifest(parseManifestCached(shown.yaml)));
  if (!principalMayOpen(principal, parsed, shown.yaml)) throw notFound("Dashboard");
  return {
    dashboardId: shown.row.id,
    slug: shown.row.slug,
    name: shown.name,
    version: shown.version,
    draftRevision: shown.row.draftRevision,
    yaml: shown.yaml,
    parsed,
    scope: principalScope(principal),
    viewer: { role: principal.role, attributes },
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
    parsed: await withOwnTables(grant.orgId, async () => servedManifest(parseManifestCached(v.specYaml))),
    scope: embedScope(grant),
    viewer: { role: null, attributes: grant.attributes },
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
  const parsed = await withOwnTables(org.id, async () => servedManifest(parseManifestCached(shown.v.specYaml)));
  // One that no longer validates stays behind its link (the pages and queries say it is unavailable) while its YAML says public.
  if (parsed.ok ? !parsed.value.manifest.platform.public : !storedPlatform(shown.v.specYaml).public) return null;
  return {
    dashboardId: shown.row.id,
    slug: shown.row.slug,
    name: shown.v.name,
    version: shown.v.version,
    draftRevision: shown.row.draftRevision,
    yaml: shown.v.specYaml,
    parsed,
    scope: scopeOf(org.id, shown.v.publisherLocationIds),
    viewer: ANONYMOUS_VIEWER,
    locale: { timeZone: org.timeZone, currency: org.currency },
  };
}
