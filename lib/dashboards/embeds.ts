import "server-only";
import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import type { z } from "zod";
import { isOrganizationAdmin, type Principal } from "@/lib/access/roles";
import { type MemberAttributes, readAttributes } from "@/lib/access/attributes";
import { deriveKey } from "@/lib/secrets";
import { config } from "@/lib/config";
import { recordAudit } from "@/lib/audit/record";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import type { DashboardEmbed } from "@/lib/db/generated/client";
import { pageBody, pageWindow, type PageQuery } from "@/lib/pagination";
import { Unauthenticated, Forbidden, Invalid, notFound, conflict } from "@/lib/errors";
import { newId } from "@/lib/ids";
import type { EmbedBody } from "./contract";
import { parseManifestCached } from "./manifest";
import { withOwnTables } from "@/lib/db/own-tables";
import { type EmbedGrant, memberAttributes, storedPlatform } from "./policy";
import { findDashboardOr404, publishedVersionOf } from "./dashboard-record";

// Embed tokens are HS256 with their own derived key and audience: never valid as bearer tokens (those are asymmetric).
const AUDIENCE = "quarry-embed";
const embedKey = () => new Uint8Array(deriveKey("embed-token"));

export async function createEmbed(principal: Principal, idOrSlug: string, body: z.output<typeof EmbedBody>) {
  const options = body ?? { locked_filters: {}, expires_in: 24 * 3600, allowed_origins: [], attributes: {} };
  const { grant, title } = await withTenant(principal, async (tx) => {
    const row = await findDashboardOr404(tx, idOrSlug);
    const published = await publishedVersionOf(tx, row);
    if (!published) throw conflict("Publish the dashboard before embedding it");
    const manifest = parseManifestCached(published.specYaml);
    if (!manifest.ok) throw conflict("The published version no longer passes Quarry's checks: publish a fixed version before embedding it");
    if (!manifest.value.manifest.platform.allow_embed) {
      throw new Forbidden("Embedding is not allowed for this dashboard: set platform.allow_embed: true in its manifest and publish");
    }
    const filterIds = new Set(manifest.value.widgets.filter((w) => w.spec.component === "filter").map((w) => w.metadata.id));
    const unknown = Object.keys(options.locked_filters).filter((id) => !filterIds.has(id));
    if (unknown.length > 0) {
      throw new Invalid(unknown.map((id) => ({ loc: ["body", "locked_filters", id], msg: `'${id}' is not a filter widget of this dashboard`, type: "unknown_filter" })));
    }
    await assertMaySignAttributes(tx, principal, options.attributes);
    const embed = await tx.dashboardEmbed.create({
      data: {
        id: newId("emb"),
        orgId: principal.orgId,
        dashboardId: row.id,
        version: published.version,
        lockedFilters: options.locked_filters as object,
        allowedOrigins: options.allowed_origins,
        // An embed never shows more than its creator may see (policy.ts reads it back).
        locationIds: principal.locationIds ?? [],
        expiresAt: new Date(Date.now() + options.expires_in * 1000),
        createdBy: principal.userId,
      },
    });
    await recordAudit(tx, { actor: principal, action: "embed.create", target: { id: embed.id, name: row.name }, after: { dashboard_id: row.id, ...embedView(embed) } });
    // The frame is titled by the name the embedded page shows: the published manifest's, never the dashboard's id.
    return { grant: embed, title: manifest.value.manifest.metadata.name };
  });
  // Attributes travel in the signed token only (`att`): each token made for a partner's user carries that user's.
  const token = await new SignJWT({ org: grant.orgId, dsh: grant.dashboardId, ver: grant.version, ...(Object.keys(options.attributes).length > 0 && { att: options.attributes }) })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setAudience(AUDIENCE)
    .setJti(grant.id)
    .setIssuedAt()
    .setExpirationTime(Math.floor(grant.expiresAt.getTime() / 1000))
    .sign(embedKey());
  const url = `${config().publicUrl}/embed/${token}`;
  return {
    embed_id: grant.id,
    token,
    url,
    iframe: `<iframe src="${url}" title="${escapeAttribute(title)} dashboard" width="100%" height="800" style="border:0" loading="lazy" allow="fullscreen"></iframe>`,
    dashboard_id: grant.dashboardId,
    version: grant.version,
    locked_filters: grant.lockedFilters as Record<string, unknown>,
    allowed_origins: grant.allowedOrigins,
    expires_at: grant.expiresAt,
  };
}

/**
 * An embed never shows more than its creator may see: a signed attribute value must be one the creator holds,
 * unless the creator is an organization admin (who administers members' attributes anyway; an API key acts as one).
 */
async function assertMaySignAttributes(tx: TenantTx, principal: Principal, attributes: MemberAttributes): Promise<void> {
  if (Object.keys(attributes).length === 0 || isOrganizationAdmin(principal)) return;
  const held = await memberAttributes(tx, principal);
  const missing = Object.entries(attributes).flatMap(([name, values]) => values.filter((value) => !(held[name] ?? []).includes(value)).map((value) => `${name}=${value}`));
  if (missing.length > 0) throw new Forbidden(`An embed may sign only attributes its creator holds (or an organization admin's): you do not hold ${missing.join(", ")}`);
}

function escapeAttribute(value: string) {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Verifies an embed token and that its grant still exists and is not revoked. */
export async function verifyEmbedToken(token: string): Promise<EmbedGrant> {
  let payload;
  try {
    ({ payload } = await jwtVerify(token, embedKey(), { audience: AUDIENCE, algorithms: ["HS256"] }));
  } catch (error) {
    const reason = error instanceof joseErrors.JWTExpired ? "This embed link has expired" : "This embed link is not valid";
    throw new Unauthenticated(reason);
  }
  const { org, dsh, ver, jti, att } = payload as { org?: unknown; dsh?: unknown; ver?: unknown; jti?: unknown; att?: unknown };
  if (typeof org !== "string" || typeof dsh !== "string" || typeof ver !== "number" || typeof jti !== "string") {
    throw new Unauthenticated("This embed link is not valid");
  }
  const { grant, current } = await withTenant({ orgId: org }, async (tx) => {
    const grant = await tx.dashboardEmbed.findFirst({ where: { id: jti, dashboardId: dsh } });
    const dashboard = grant ? await tx.dashboard.findUnique({ where: { id: dsh }, select: { publishedVersion: true } }) : null;
    const current = dashboard?.publishedVersion
      ? await tx.dashboardVersion.findUnique({ where: { dashboardId_version: { dashboardId: dsh, version: dashboard.publishedVersion } }, select: { specYaml: true } })
      : null;
    return { grant, current };
  });
  if (!grant || grant.version !== ver) throw new Unauthenticated("This embed link is not valid");
  if (grant.revokedAt) throw new Unauthenticated("This embed link has been revoked");
  // The grant shows the version it was made for, but the dashboard's current published manifest
  // decides whether it may be embedded at all: turning allow_embed off and publishing stops every link.
  // One that no longer validates (rules tightened since) is read from its YAML: its links stay, and the page says it is unavailable.
  // Checked against the organization's own tables (issue 42): an embed request carries no principal whose work would bring them.
  const currentManifest = current ? await withOwnTables(org, async () => parseManifestCached(current.specYaml)) : null;
  const allowEmbed = currentManifest?.ok ? currentManifest.value.manifest.platform.allow_embed : current ? storedPlatform(current.specYaml).allow_embed : false;
  if (!allowEmbed) {
    throw new Forbidden("Embedding has been turned off for this dashboard");
  }
  return {
    embedId: grant.id,
    orgId: grant.orgId,
    dashboardId: grant.dashboardId,
    version: grant.version,
    lockedFilters: grant.lockedFilters as Record<string, unknown>,
    allowedOrigins: grant.allowedOrigins,
    locationIds: grant.locationIds,
    expiresAt: grant.expiresAt,
    downloads: currentManifest?.ok ? currentManifest.value.manifest.platform.downloads : { pdf: false, png: false },
    attributes: readAttributes(att),
  };
}

/** What an embed page whose link has only run out needs to ask its framing page for a new one. */
export interface ExpiredEmbed {
  embedId: string;
  /** ISO instant the link expired at. */
  expiresAt: string;
  allowedOrigins: string[];
}

/**
 * An embed link whose only fault is its age: correctly signed, for a grant that still exists, is not revoked and
 * names partner origins. Its page asks the framing page for a new token (issue 44 §8) instead of ending at an error
 * page; anything else is null (the usual refusal).
 */
export async function expiredEmbed(token: string): Promise<ExpiredEmbed | null> {
  let payload;
  try {
    await jwtVerify(token, embedKey(), { audience: AUDIENCE, algorithms: ["HS256"] });
    return null;
  } catch (error) {
    // jose checks the signature before the claims: a JWTExpired's payload is authentic.
    if (!(error instanceof joseErrors.JWTExpired)) return null;
    payload = error.payload;
  }
  const { org, dsh, jti, aud, exp } = payload as { org?: unknown; dsh?: unknown; jti?: unknown; aud?: unknown; exp?: unknown };
  const audiences = Array.isArray(aud) ? aud : [aud];
  if (typeof org !== "string" || typeof dsh !== "string" || typeof jti !== "string" || typeof exp !== "number" || !audiences.includes(AUDIENCE)) return null;
  const grant = await withTenant({ orgId: org }, (tx) => tx.dashboardEmbed.findFirst({ where: { id: jti, dashboardId: dsh } }));
  if (!grant || grant.revokedAt || grant.allowedOrigins.length === 0) return null;
  return { embedId: grant.id, expiresAt: new Date(exp * 1000).toISOString(), allowedOrigins: grant.allowedOrigins };
}

/** An embed as the API lists it (and its audit rows record it): never its token. */
function embedView(g: DashboardEmbed) {
  return {
    embed_id: g.id,
    version: g.version,
    locked_filters: g.lockedFilters as Record<string, unknown>,
    allowed_origins: g.allowedOrigins,
    expires_at: g.expiresAt,
    revoked_at: g.revokedAt,
    created_by: g.createdBy,
    created_at: g.createdAt,
  };
}

export async function listEmbeds(principal: Principal, idOrSlug: string, page: PageQuery) {
  return withTenant(principal, async (tx) => {
    const row = await findDashboardOr404(tx, idOrSlug);
    const where = { dashboardId: row.id };
    const [grants, total] = await Promise.all([
      tx.dashboardEmbed.findMany({ where, orderBy: [{ createdAt: "desc" }, { id: "asc" }], ...pageWindow(page) }),
      tx.dashboardEmbed.count({ where }),
    ]);
    return pageBody(
      grants.map(embedView),
      total,
      page,
    );
  });
}

export async function revokeEmbed(principal: Principal, idOrSlug: string, embedId: string): Promise<void> {
  await withTenant(principal, async (tx) => {
    const row = await findDashboardOr404(tx, idOrSlug);
    const before = await tx.dashboardEmbed.findFirst({ where: { id: embedId, dashboardId: row.id } });
    if (!before) throw notFound("Embed");
    const { count } = await tx.dashboardEmbed.updateMany({ where: { id: embedId, dashboardId: row.id, revokedAt: null }, data: { revokedAt: new Date() } });
    if (count === 0) return;
    const after = await tx.dashboardEmbed.findUniqueOrThrow({ where: { id: embedId } });
    await recordAudit(tx, { actor: principal, action: "embed.revoke", target: { id: embedId, name: row.name }, before: { dashboard_id: row.id, ...embedView(before) }, after: { dashboard_id: row.id, ...embedView(after) } });
  });
}
