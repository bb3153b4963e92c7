import "server-only";
import type { Principal } from "@/lib/access/roles";
import { recordAudit } from "@/lib/audit/record";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import { Invalid, conflict, unprocessable, type ValidationItem } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { dashboardRollups } from "@/lib/query/rollup-definition";
import { sendRollupRefresh } from "@/lib/rollups/jobs";
import { declareRollups } from "@/lib/rollups/registry";
import type { VersionSource } from "./contract";
import type { DashboardRow } from "./dashboard-record";
import { checkDrillTargets } from "./interactions";
import { parseManifest, type ValidManifest } from "./manifest";
import { syncManifestAlerts } from "./manifest-alerts";
import { forgetDashboardResults } from "./result-cache";
import { recordVersionRollups } from "./version-rollups";

/**
 * The one write path of a dashboard row (issue 46 §1). The editor's endpoints, restore, the sample seed and
 * dashboards-as-code apply all write through a DashboardWriter, so they check, version and refresh alike:
 * - a new or changed slug must be free (409);
 * - every manifest written is checked for its drill-through targets once all the transaction's writes are done,
 *   against the state they leave (a push may create a target or prune one): 422 naming what is missing;
 * - publishing declares the version's rollups and records them with the version;
 * - after commit, cached results of what changed are forgotten and, when a version was published or a dashboard
 *   deleted, the organization's rollups are refreshed (the worker builds new ones and removes those no published
 *   version or live embed declares any more).
 */

export function validOr422(specYaml: string): ValidManifest {
  const parsed = parseManifest(specYaml);
  if (!parsed.ok) throw unprocessable(parsed.errors);
  return parsed.value;
}

/** A manifest to write as a draft: its text and what it validated to (validOr422). */
export interface DraftSpec {
  yaml: string;
  manifest: ValidManifest;
  /** Where its problems are reported; by default under the request's `spec_yaml` (apply names the file). */
  locate?: (items: ValidationItem[]) => ValidationItem[];
}

/** What a new version records about itself beside its manifest (migration 0035). */
export interface PublishMeta {
  message?: string;
  source?: VersionSource;
  restoredFrom?: number;
}

/** The refresh is sent a moment later so that publishes and deletes close together are one job. */
const ROLLUP_REFRESH_DELAY_SECONDS = 2;

/** A dashboard as its audit rows record it: what an edit, publish or restore changes. */
const audited = (row: DashboardRow) => ({ name: row.name, slug: row.slug, draft_revision: row.draftRevision, published_version: row.publishedVersion, draft_yaml: row.draftYaml });

/** Made by writeDashboards only, so no write skips the checks before commit or the work after it. */
class DashboardWriter {
  private readonly written: { slug: string; spec: DraftSpec }[] = [];
  /** Dashboards whose cached results go after commit: all of them, or only their draft's. */
  private readonly forget = new Map<string, "draft" | "all">();
  private refreshRollups = false;

  constructor(
    readonly tx: TenantTx,
    private readonly principal: Principal,
  ) {}

  async create(input: { name: string; slug: string; spec: DraftSpec }): Promise<DashboardRow> {
    await this.ensureSlugFree(input.slug);
    const { orgId, userId } = this.principal;
    const row = await this.tx.dashboard.create({ data: { id: newId("dsh"), orgId, name: input.name, slug: input.slug, draftYaml: input.spec.yaml, createdBy: userId, updatedBy: userId } });
    this.written.push({ slug: row.slug, spec: input.spec });
    await recordAudit(this.tx, { actor: this.principal, action: "dashboard.create", target: { id: row.id, name: row.name }, after: audited(row) });
    return row;
  }

  /** A new draft revision with what `change` names. */
  async editDraft(row: DashboardRow, change: { name?: string; slug?: string; spec?: DraftSpec }): Promise<DashboardRow> {
    if (change.slug !== undefined && change.slug !== row.slug) await this.ensureSlugFree(change.slug, row.id);
    const updated = await this.writeDraft(row, { name: change.name, slug: change.slug, draftYaml: change.spec?.yaml });
    if (change.spec) this.written.push({ slug: updated.slug, spec: change.spec });
    await recordAudit(this.tx, { actor: this.principal, action: "dashboard.edit", target: { id: row.id, name: updated.name }, before: audited(row), after: audited(updated) });
    return updated;
  }

  /**
   * A published version's manifest and name become the draft as they were recorded: they were checked when
   * published, and a draft that no longer validates shows its errors in the editor (publishing it checks again).
   */
  async restoreDraft(row: DashboardRow, version: { version: number; name: string; specYaml: string }): Promise<DashboardRow> {
    const updated = await this.writeDraft(row, { name: version.name, draftYaml: version.specYaml });
    await recordAudit(this.tx, { actor: this.principal, action: "dashboard.restore", target: { id: row.id, name: updated.name }, before: audited(row), after: { ...audited(updated), restored_from: version.version } });
    return updated;
  }

  async remove(row: DashboardRow): Promise<void> {
    await this.tx.dashboard.delete({ where: { id: row.id } });
    await recordAudit(this.tx, { actor: this.principal, action: "dashboard.delete", target: { id: row.id, name: row.name }, before: audited(row) });
    this.forget.set(row.id, "all");
    // The worker removes the rollups only this dashboard used.
    this.refreshRollups = true;
  }

  /** Freezes the row's draft as its next version; the draft must validate, and stays editable without touching it. */
  async publish(row: DashboardRow, meta: PublishMeta = {}): Promise<DashboardRow> {
    const { orgId, userId, locationIds } = this.principal;
    const manifest = validOr422(row.draftYaml);
    // Its rollups are declared with the version, which records them; the worker builds them (the tables answer
    // until then) and removes those no published version declares any more.
    const rollupIds = await declareRollups(this.tx, orgId, dashboardRollups(manifest.datasets.values()));
    this.refreshRollups = true;
    const latest = await this.tx.dashboardVersion.aggregate({ where: { dashboardId: row.id }, _max: { version: true } });
    const version = (latest._max.version ?? 0) + 1;
    await this.tx.dashboardVersion.create({
      data: {
        orgId,
        dashboardId: row.id,
        version,
        name: row.name,
        specYaml: row.draftYaml,
        publishedBy: userId,
        // Public viewers of this version read under the publisher's location scope (policy.ts).
        publisherLocationIds: locationIds ?? [],
        message: meta.message ?? null,
        source: meta.source ?? undefined,
        restoredFrom: meta.restoredFrom ?? null,
      },
    });
    await recordVersionRollups(this.tx, row.id, version, rollupIds);
    // Alerts the manifest declares watch the published version: created, updated and removed with it.
    await syncManifestAlerts(this.tx, this.principal, row.id, manifest.manifest.spec.alerts ?? [], new Date());
    const updated = await this.tx.dashboard.update({ where: { id: row.id }, data: { publishedVersion: version, updatedBy: userId, updatedAt: new Date() } });
    this.forget.set(row.id, "all");
    await recordAudit(this.tx, { actor: this.principal, action: "dashboard.publish", target: { id: row.id, name: updated.name }, before: audited(row), after: { ...audited(updated), message: meta.message ?? null } });
    return updated;
  }

  /** Every manifest written, checked against what the writes leave: one 422 with all their problems. */
  async checkWrittenManifests(): Promise<void> {
    const problems: ValidationItem[] = [];
    for (const { slug, spec } of this.written) {
      try {
        await checkDrillTargets(this.tx, spec.yaml, spec.manifest, slug);
      } catch (error) {
        if (!(error instanceof Invalid) || typeof error.detail === "string") throw error;
        problems.push(...(spec.locate ? spec.locate(error.detail) : error.detail));
      }
    }
    if (problems.length > 0) throw new Invalid(problems);
  }

  /** What follows a commit: nothing of it may run for a transaction that rolled back. */
  async afterCommit(): Promise<void> {
    for (const [dashboardId, what] of this.forget) forgetDashboardResults(this.principal.orgId, dashboardId, what === "draft" ? "draft" : undefined);
    if (this.refreshRollups) await sendRollupRefresh(this.principal.orgId, { startAfterSeconds: ROLLUP_REFRESH_DELAY_SECONDS, always: true });
  }

  private async ensureSlugFree(slug: string, exceptId?: string): Promise<void> {
    const taken = await this.tx.dashboard.findFirst({ where: { slug, ...(exceptId ? { NOT: { id: exceptId } } : {}) }, select: { id: true } });
    if (taken) throw conflict(`A dashboard with slug '${slug}' already exists in this organization`);
  }

  private async writeDraft(row: DashboardRow, change: { name?: string; slug?: string; draftYaml?: string }): Promise<DashboardRow> {
    const updated = await this.tx.dashboard.update({
      where: { id: row.id },
      data: {
        ...(change.name !== undefined ? { name: change.name } : {}),
        ...(change.slug !== undefined ? { slug: change.slug } : {}),
        ...(change.draftYaml !== undefined ? { draftYaml: change.draftYaml } : {}),
        draftRevision: { increment: 1 },
        updatedBy: this.principal.userId,
        updatedAt: new Date(),
      },
    });
    if (!this.forget.has(row.id)) this.forget.set(row.id, "draft");
    return updated;
  }
}

/**
 * Runs `work` in one tenant transaction with a writer: the manifests it wrote are checked before commit, and
 * what follows a commit runs once it has.
 */
export async function writeDashboards<T>(principal: Principal, work: (writer: DashboardWriter) => Promise<T>): Promise<T> {
  let writer: DashboardWriter | undefined;
  const result = await withTenant(principal, async (tx) => {
    writer = new DashboardWriter(tx, principal);
    const value = await work(writer);
    await writer.checkWrittenManifests();
    return value;
  });
  await writer?.afterCommit();
  return result;
}

export type { DashboardWriter };
