import "server-only";
import type { Principal } from "@/lib/access/roles";
import type { TenantTx } from "@/lib/db/tenant";
import { notFound } from "@/lib/errors";
import type { DashboardRecord } from "./contract";
import { parseManifestCached, servedManifest } from "./manifest";
import { isEditor, viewerMayOpen } from "./policy";

export type DashboardRow = {
  id: string;
  orgId: string;
  name: string;
  slug: string;
  draftYaml: string;
  draftRevision: number;
  publishedVersion: number | null;
  createdBy: string;
  updatedBy: string;
  createdAt: Date;
  updatedAt: Date;
};

export type VersionRow = { version: number; specYaml: string; publishedAt: Date; name: string };

/** A dashboard by id or slug, or 404. RLS already limits it to the caller's organization. */
export async function findDashboardOr404(tx: TenantTx, idOrSlug: string): Promise<DashboardRow> {
  const row = await tx.dashboard.findFirst({ where: { OR: [{ id: idOrSlug }, { slug: idOrSlug }] } });
  if (!row) throw notFound("Dashboard");
  return row;
}

export async function publishedVersionOf(tx: TenantTx, row: DashboardRow): Promise<VersionRow | null> {
  if (row.publishedVersion === null) return null;
  return tx.dashboardVersion.findUnique({
    where: { dashboardId_version: { dashboardId: row.id, version: row.publishedVersion } },
    select: { version: true, specYaml: true, publishedAt: true, name: true },
  });
}

/**
 * The record as the caller sees it: editors get the draft, viewers the
 * published version (or 404 when they may not see the dashboard at all).
 */
export function toRecord(principal: Principal, row: DashboardRow, published: VersionRow | null, options: { includeYaml: boolean }): DashboardRecord | null {
  const editor = isEditor(principal);
  const yaml = editor ? row.draftYaml : published?.specYaml;
  if (!yaml) return null;
  // Editors see every widget of the manifest they write; viewers only those it places (no parked ones).
  const parsed = editor ? parseManifestCached(yaml) : servedManifest(parseManifestCached(yaml));
  const publishedManifest = published ? parseManifestCached(published.specYaml) : null;
  if (!editor && (!publishedManifest?.ok || !viewerMayOpen(principal, publishedManifest.value))) return null;
  const shown = parsed.ok ? parsed.value : null;
  const platformSource = publishedManifest?.ok ? publishedManifest.value : shown;
  const platform = platformSource?.manifest.platform ?? { roles: [], allow_embed: false, public: false };
  return {
    id: row.id,
    org_id: row.orgId,
    name: editor ? row.name : (published?.name ?? row.name),
    slug: row.slug,
    status: row.publishedVersion === null ? "draft" : "published",
    draft_revision: row.draftRevision,
    published_version: row.publishedVersion,
    has_unpublished_changes: published ? published.specYaml !== row.draftYaml || published.name !== row.name : true,
    platform: { roles: platform.roles, allow_embed: platform.allow_embed, public: platform.public },
    widgets: shown ? shown.widgets.map((w) => ({ id: w.metadata.id, name: w.metadata.name, component: w.spec.component })) : [],
    tabs: shown ? shown.manifest.spec.tabs.map((t) => ({ id: t.id, name: t.name, widgets: t.widgets })) : [],
    ...(options.includeYaml ? { spec_yaml: yaml } : {}),
    created_by: row.createdBy,
    updated_by: row.updatedBy,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    published_at: published?.publishedAt.toISOString() ?? null,
  };
}
