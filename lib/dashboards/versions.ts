import "server-only";
import type { Principal } from "@/lib/access/roles";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import { notFound, unprocessable } from "@/lib/errors";
import { pageBody, pageWindow, type PageQuery } from "@/lib/pagination";
import { VersionSource, type DashboardRecord } from "./contract";
import { recordOf } from "./dashboards";
import { writeDashboards } from "./dashboard-writes";
import { diffManifests } from "./manifest-diff";
import { assertMayPublish } from "./policy";
import { findDashboardOr404, type DashboardRow } from "./dashboard-record";
import type { ManifestDiff, VersionRef, VersionSummary } from "./versions-contract";

type VersionRow = {
  version: number;
  name: string;
  specYaml: string;
  publishedBy: string;
  publishedAt: Date;
  message: string | null;
  source: unknown;
  restoredFrom: number | null;
};

const SELECT = { version: true, name: true, specYaml: true, publishedBy: true, publishedAt: true, message: true, source: true, restoredFrom: true } as const;

/** API keys publish under their id (apk_…), people under their user id. */
const isKeyId = (id: string) => id.startsWith("apk_");

/** Names of the users and API keys that published, read under RLS: another organization's never resolve. */
async function publisherNames(tx: TenantTx, ids: readonly string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  const [users, keys] = await Promise.all([
    tx.user.findMany({ where: { id: { in: unique.filter((id) => !isKeyId(id)) } }, select: { id: true, name: true } }),
    tx.apiKey.findMany({ where: { id: { in: unique.filter(isKeyId) } }, select: { id: true, name: true } }),
  ]);
  return new Map([...users, ...keys].map((r) => [r.id, r.name]));
}

function summaryOf(row: VersionRow, dashboard: DashboardRow, names: ReadonlyMap<string, string>): VersionSummary {
  const source = VersionSource.safeParse(row.source);
  return {
    version: row.version,
    name: row.name,
    published_at: row.publishedAt.toISOString(),
    published_by: { kind: isKeyId(row.publishedBy) ? "api_key" : "user", id: row.publishedBy, name: names.get(row.publishedBy) ?? null },
    message: row.message,
    source: source.success ? source.data : null,
    restored_from: row.restoredFrom,
    is_published: dashboard.publishedVersion === row.version,
  };
}

/** A published version by number or `published`, or 404. */
async function versionOr404(tx: TenantTx, dashboard: DashboardRow, ref: VersionRef): Promise<VersionRow> {
  const number = ref === "published" ? dashboard.publishedVersion : ref === "draft" ? null : ref;
  const row = number === null ? null : await tx.dashboardVersion.findUnique({ where: { dashboardId_version: { dashboardId: dashboard.id, version: number } }, select: SELECT });
  if (!row) throw notFound(ref === "published" ? "Published version" : "Version");
  return row;
}

/** Newest first. */
export async function listVersions(principal: Principal, idOrSlug: string, page: PageQuery) {
  return withTenant(principal, async (tx) => {
    const dashboard = await findDashboardOr404(tx, idOrSlug);
    const where = { dashboardId: dashboard.id };
    const [rows, total] = await Promise.all([tx.dashboardVersion.findMany({ where, select: SELECT, orderBy: { version: "desc" }, ...pageWindow(page) }), tx.dashboardVersion.count({ where })]);
    const names = await publisherNames(tx, rows.map((r) => r.publishedBy));
    return pageBody(rows.map((r) => summaryOf(r, dashboard, names)), total, page);
  });
}

export async function getVersion(principal: Principal, idOrSlug: string, ref: VersionRef) {
  if (ref === "draft") throw notFound("Version");
  return withTenant(principal, async (tx) => {
    const dashboard = await findDashboardOr404(tx, idOrSlug);
    const row = await versionOr404(tx, dashboard, ref);
    return { ...summaryOf(row, dashboard, await publisherNames(tx, [row.publishedBy])), spec_yaml: row.specYaml };
  });
}

/** The manifest of one side of a diff: the draft or a published version. */
async function sideOf(tx: TenantTx, dashboard: DashboardRow, ref: VersionRef): Promise<{ label: number | "draft"; yaml: string }> {
  if (ref === "draft") return { label: "draft", yaml: dashboard.draftYaml };
  const row = await versionOr404(tx, dashboard, ref);
  return { label: row.version, yaml: row.specYaml };
}

export async function diffVersions(principal: Principal, idOrSlug: string, from: VersionRef, to: VersionRef): Promise<ManifestDiff & { from: number | "draft"; to: number | "draft" }> {
  const [a, b] = await withTenant(principal, async (tx) => {
    const dashboard = await findDashboardOr404(tx, idOrSlug);
    return Promise.all([sideOf(tx, dashboard, from), sideOf(tx, dashboard, to)]);
  });
  return { ...diffManifests(a.yaml, b.yaml), from: a.label, to: b.label };
}

/**
 * The version's manifest and name become the draft (a new draft revision); with `publish`, the draft
 * is then published as a new version that records which one it restored. No version is changed.
 */
export async function restoreVersion(principal: Principal, idOrSlug: string, ref: VersionRef, options: { publish?: boolean; message?: string } = {}): Promise<DashboardRecord> {
  if (ref === "draft") throw unprocessable("The draft cannot be restored: name a published version");
  if (options.publish) assertMayPublish(principal);
  return writeDashboards(principal, async (writer) => {
    const dashboard = await findDashboardOr404(writer.tx, idOrSlug);
    const version = await versionOr404(writer.tx, dashboard, ref);
    let row = await writer.restoreDraft(dashboard, version);
    // Publishing validates the restored draft; a version that no longer validates is refused whole (422).
    if (options.publish) row = await writer.publish(row, { message: options.message ?? `Restore version ${version.version}`, restoredFrom: version.version });
    return recordOf(writer.tx, principal, row);
  });
}
