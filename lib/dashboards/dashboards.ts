import "server-only";
import fs from "node:fs";
import path from "node:path";
import type { z } from "zod";
import type { Principal } from "@/lib/access/roles";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import { notFound } from "@/lib/errors";
import { pageBody, pageWindow } from "@/lib/pagination";
import type { CreateDashboardBody, DashboardRecord, ListDashboardsQuery, UpdateDashboardBody } from "./contract";
import { type PublishMeta, validOr422, writeDashboards } from "./dashboard-writes";
import { assertMayPublish, isEditor } from "./policy";
import { findDashboardOr404, publishedVersionOf, toRecord, type DashboardRow } from "./dashboard-record";
import { withOwnTables } from "@/lib/db/own-tables";

export async function recordOf(tx: TenantTx, principal: Principal, row: DashboardRow): Promise<DashboardRecord> {
  const record = toRecord(principal, row, await publishedVersionOf(tx, row), { includeYaml: true });
  if (!record) throw notFound("Dashboard");
  return record;
}

export async function createDashboard(principal: Principal, body: z.output<typeof CreateDashboardBody>): Promise<DashboardRecord> {
  const spec = { yaml: body.spec_yaml, manifest: validOr422(body.spec_yaml) };
  return writeDashboards(principal, async (writer) => recordOf(writer.tx, principal, await writer.create({ name: body.name, slug: body.slug, spec })));
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
  const spec = body.spec_yaml !== undefined ? { yaml: body.spec_yaml, manifest: validOr422(body.spec_yaml) } : undefined;
  return writeDashboards(principal, async (writer) => {
    const row = await findDashboardOr404(writer.tx, idOrSlug);
    return recordOf(writer.tx, principal, await writer.editDraft(row, { name: body.name, slug: body.slug, spec }));
  });
}

export async function deleteDashboard(principal: Principal, idOrSlug: string): Promise<void> {
  await writeDashboards(principal, async (writer) => writer.remove(await findDashboardOr404(writer.tx, idOrSlug)));
}

/** Freezes the current draft as the next version; the draft stays editable without touching it. */
export async function publishDashboard(principal: Principal, idOrSlug: string, meta: PublishMeta = {}): Promise<DashboardRecord> {
  assertMayPublish(principal);
  return writeDashboards(principal, async (writer) => recordOf(writer.tx, principal, await writer.publish(await findDashboardOr404(writer.tx, idOrSlug), meta)));
}

export const SAMPLE_SLUG = "sample-sales";
const SAMPLE_FILE = path.join(/*turbopackIgnore: true*/ process.cwd(), "docs", "manifests", "sample-dashboard.yaml");

/** Creates or refreshes the bundled sample dashboard and publishes it when its manifest changed. Idempotent. */
export async function seedSampleDashboard(principal: Principal): Promise<DashboardRecord> {
  // The sample reads the organization's own marketing_spend (issue 42): checked against its tables, whoever calls.
  return withOwnTables(principal.orgId, () => seedSample(principal));
}

async function seedSample(principal: Principal): Promise<DashboardRecord> {
  const specYaml = fs.readFileSync(/*turbopackIgnore: true*/ SAMPLE_FILE, "utf8");
  const spec = { yaml: specYaml, manifest: validOr422(specYaml) };
  const name = spec.manifest.manifest.metadata.name;
  return writeDashboards(principal, async (writer) => {
    const existing = await writer.tx.dashboard.findFirst({ where: { slug: SAMPLE_SLUG } });
    const published = existing ? await publishedVersionOf(writer.tx, existing) : null;
    const row = !existing
      ? await writer.create({ name, slug: SAMPLE_SLUG, spec })
      : existing.draftYaml !== specYaml || existing.name !== name
        ? await writer.editDraft(existing, { name, spec })
        : existing;
    if (published?.specYaml === specYaml && published.name === name) return recordOf(writer.tx, principal, row);
    assertMayPublish(principal);
    return recordOf(writer.tx, principal, await writer.publish(row));
  });
}
