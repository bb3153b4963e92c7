import "server-only";
import fs from "node:fs";
import path from "node:path";
import type { z } from "zod";
import type { Principal } from "@/lib/access/roles";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import { notFound, conflict, unprocessable } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { pageBody, pageWindow } from "@/lib/pagination";
import type { CreateDashboardBody, DashboardRecord, ListDashboardsQuery, UpdateDashboardBody, VersionSource } from "./contract";
import { parseManifest } from "./manifest";
import { checkDrillTargets } from "./interactions";
import { forgetDashboardResults } from "./result-cache";
import { dashboardRollups } from "@/lib/query/rollup-definition";
import { sendRollupRefresh } from "@/lib/rollups/jobs";
import { declareRollups } from "@/lib/rollups/registry";
import { recordVersionRollups } from "./version-rollups";
import { assertMayPublish, isEditor } from "./policy";
import { findDashboardOr404, publishedVersionOf, toRecord, type DashboardRow } from "./dashboard-record";

export function validOr422(specYaml: string) {
  const parsed = parseManifest(specYaml);
  if (!parsed.ok) throw unprocessable(parsed.errors);
  return parsed.value;
}

export async function recordOf(tx: TenantTx, principal: Principal, row: DashboardRow): Promise<DashboardRecord> {
  const record = toRecord(principal, row, await publishedVersionOf(tx, row), { includeYaml: true });
  if (!record) throw notFound("Dashboard");
  return record;
}

async function ensureSlugFree(tx: TenantTx, slug: string, exceptId?: string) {
  const taken = await tx.dashboard.findFirst({ where: { slug, ...(exceptId ? { NOT: { id: exceptId } } : {}) }, select: { id: true } });
  if (taken) throw conflict(`A dashboard with slug '${slug}' already exists in this organization`);
}

export async function createDashboard(principal: Principal, body: z.output<typeof CreateDashboardBody>): Promise<DashboardRecord> {
  const parsed = validOr422(body.spec_yaml);
  return withTenant(principal, async (tx) => {
    await ensureSlugFree(tx, body.slug);
    await checkDrillTargets(tx, body.spec_yaml, parsed, body.slug);
    const row = await tx.dashboard.create({
      data: { id: newId("dsh"), orgId: principal.orgId, name: body.name, slug: body.slug, draftYaml: body.spec_yaml, createdBy: principal.userId, updatedBy: principal.userId },
    });
    return recordOf(tx, principal, row);
  });
}

/**
 * Most recently edited first. Editors see every dashboard, so their page is cut in SQL; whether a viewer
 * may see one is written in its published manifest's `platform.roles`, so theirs is cut after reading
 * the published dashboards (an organization has tens, not thousands).
 */
export async function listDashboards(principal: Principal, query: z.output<typeof ListDashboardsQuery>) {
  const where = query.status === "draft" ? { publishedVersion: null } : query.status === "published" ? { NOT: { publishedVersion: null } } : {};
  const orderBy = [{ updatedAt: "desc" as const }, { id: "asc" as const }];
  return withTenant(principal, async (tx) => {
    const records = async (rows: DashboardRow[]) => {
      const items: DashboardRecord[] = [];
      for (const row of rows) {
        const record = toRecord(principal, row, await publishedVersionOf(tx, row), { includeYaml: false });
        if (record) items.push(record);
      }
      return items;
    };
    if (isEditor(principal)) {
      const [rows, total] = await Promise.all([tx.dashboard.findMany({ where, orderBy, ...pageWindow(query) }), tx.dashboard.count({ where })]);
      return pageBody(await records(rows), total, query);
    }
    const visible = await records(await tx.dashboard.findMany({ where: { AND: [where, { NOT: { publishedVersion: null } }] }, orderBy }));
    return pageBody(visible.slice(query.offset, query.offset + query.limit), visible.length, query);
  });
}

export async function getDashboard(principal: Principal, idOrSlug: string): Promise<DashboardRecord> {
  return withTenant(principal, async (tx) => recordOf(tx, principal, await findDashboardOr404(tx, idOrSlug)));
}

export async function updateDashboard(principal: Principal, idOrSlug: string, body: z.output<typeof UpdateDashboardBody>): Promise<DashboardRecord> {
  const parsed = body.spec_yaml !== undefined ? validOr422(body.spec_yaml) : null;
  return withTenant(principal, async (tx) => {
    const row = await findDashboardOr404(tx, idOrSlug);
    if (body.slug !== undefined && body.slug !== row.slug) await ensureSlugFree(tx, body.slug, row.id);
    if (parsed && body.spec_yaml !== undefined) await checkDrillTargets(tx, body.spec_yaml, parsed, body.slug ?? row.slug);
    const updated = await tx.dashboard.update({
      where: { id: row.id },
      data: {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.slug !== undefined ? { slug: body.slug } : {}),
        ...(body.spec_yaml !== undefined ? { draftYaml: body.spec_yaml } : {}),
        draftRevision: { increment: 1 },
        updatedBy: principal.userId,
        updatedAt: new Date(),
      },
    });
    forgetDashboardResults(principal.orgId, row.id, "draft");
    return recordOf(tx, principal, updated);
  });
}

export async function deleteDashboard(principal: Principal, idOrSlug: string): Promise<void> {
  await withTenant(principal, async (tx) => {
    const row = await findDashboardOr404(tx, idOrSlug);
    await tx.dashboard.delete({ where: { id: row.id } });
    forgetDashboardResults(principal.orgId, row.id);
  });
  // The worker removes the rollups only this dashboard used.
  void sendRollupRefresh(principal.orgId, { startAfterSeconds: 2, always: true });
}

/** What a new version records about itself beside its manifest (migration 0035). */
export interface PublishMeta {
  message?: string;
  source?: VersionSource;
  restoredFrom?: number;
}

/** Freezes the current draft as the next version; the draft stays editable without touching it. */
export async function publishDashboard(principal: Principal, idOrSlug: string, meta: PublishMeta = {}): Promise<DashboardRecord> {
  assertMayPublish(principal);
  return withTenant(principal, async (tx) => recordOf(tx, principal, await publishDraft(tx, principal, await findDashboardOr404(tx, idOrSlug), meta)));
}

/** Publishes a row's draft inside the caller's transaction (publish, restore, apply): the draft must validate. */
export async function publishDraft(tx: TenantTx, principal: Principal, row: DashboardRow, meta: PublishMeta = {}): Promise<DashboardRow> {
  const manifest = validOr422(row.draftYaml);
  // Its rollups are declared with the version, which records them; the worker builds them (the tables answer
  // until then) and removes those no published version declares any more. Sent a moment later, so the job finds
  // this transaction committed.
  const rollupIds = await declareRollups(tx, principal.orgId, dashboardRollups(manifest.datasets.values()));
  void sendRollupRefresh(principal.orgId, { startAfterSeconds: 2, always: true });
  const latest = await tx.dashboardVersion.aggregate({ where: { dashboardId: row.id }, _max: { version: true } });
  const version = (latest._max.version ?? 0) + 1;
  await tx.dashboardVersion.create({
    data: {
      orgId: principal.orgId,
      dashboardId: row.id,
      version,
      name: row.name,
      specYaml: row.draftYaml,
      publishedBy: principal.userId,
      // Public viewers of this version read under the publisher's location scope (policy.ts).
      publisherLocationIds: principal.locationIds ?? [],
      message: meta.message ?? null,
      source: meta.source ?? undefined,
      restoredFrom: meta.restoredFrom ?? null,
    },
  });
  await recordVersionRollups(tx, row.id, version, rollupIds);
  const updated = await tx.dashboard.update({ where: { id: row.id }, data: { publishedVersion: version, updatedBy: principal.userId, updatedAt: new Date() } });
  forgetDashboardResults(principal.orgId, row.id);
  return updated;
}

export const SAMPLE_SLUG = "sample-sales";
const SAMPLE_FILE = path.join(/*turbopackIgnore: true*/ process.cwd(), "docs", "manifests", "sample-dashboard.yaml");

/** Creates or refreshes the bundled sample dashboard and publishes it when its manifest changed. Idempotent. */
export async function seedSampleDashboard(principal: Principal): Promise<DashboardRecord> {
  const specYaml = fs.readFileSync(/*turbopackIgnore: true*/ SAMPLE_FILE, "utf8");
  const manifest = validOr422(specYaml);
  const name = manifest.manifest.metadata.name;
  const id = await withTenant(principal, async (tx) => {
    const existing = await tx.dashboard.findFirst({ where: { slug: SAMPLE_SLUG } });
    if (!existing) {
      const row = await tx.dashboard.create({
        data: { id: newId("dsh"), orgId: principal.orgId, name, slug: SAMPLE_SLUG, draftYaml: specYaml, createdBy: principal.userId, updatedBy: principal.userId },
      });
      return { id: row.id, publish: true };
    }
    const published = await publishedVersionOf(tx, existing);
    if (existing.draftYaml !== specYaml || existing.name !== name) {
      await tx.dashboard.update({ where: { id: existing.id }, data: { draftYaml: specYaml, name, draftRevision: { increment: 1 }, updatedBy: principal.userId, updatedAt: new Date() } });
    }
    return { id: existing.id, publish: published?.specYaml !== specYaml || published?.name !== name };
  });
  return id.publish ? publishDashboard(principal, id.id) : getDashboard(principal, id.id);
}
