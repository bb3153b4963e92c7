import "server-only";
import path from "node:path";
import type { z } from "zod";
import { findOrganization } from "@/lib/auth/directory";
import type { Principal } from "@/lib/access/roles";
import { withTenant, type TenantScope } from "@/lib/db/tenant";
import { Conflict, Invalid, type ValidationItem } from "@/lib/errors";
import { formatPath, manifestErrorsFromItems } from "@/lib/manifest/errors";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import type { ParsedDashboard } from "@/lib/manifest/schema";
import { QueryError } from "@/lib/query/errors";
import { explainReadOnly } from "@/lib/query/execute";
import { runWidgetQuery } from "@/lib/query/run";
import { Slug } from "./contract";
import { type DraftSpec, type PublishMeta, writeDashboards } from "./dashboard-writes";
import { SQL_ALLOW_LIST } from "./manifest";
import { diffManifests } from "./manifest-diff";
import type { ApplyBody, ApplyResult, ManifestFile, Plan, PlanBase, PlanBody, PlanCheck, PlanError, PlanItem } from "./plan-contract";
import { assertMayPublish, principalScope } from "./policy";
import type { DashboardRow } from "./dashboard-record";
import type { DatasetPlanItem } from "@/lib/datasets/contract";
import { type DatasetFile, type OrgState, afterDatasetWrite, isDatasetFile, orgState, planDatasetFiles, readDatasetFiles, sharedBeforeAfter, writeDatasetFiles } from "./dataset-plan";
import { type OrgSharedDatasets, withSharedDatasets } from "@/lib/datasets/store";

/**
 * Dashboards as code (issue 30 §3): a set of manifest files, one per dashboard, named `<slug>.yaml`,
 * planned against the organization's dashboards (what would change, what is wrong, what only the
 * server can tell) and applied in one transaction, refused whole when anything changed since the plan.
 */

interface FilePlan {
  index: number;
  file: ManifestFile;
  slug: string;
  parsed: ParsedDashboard | null;
  errors: PlanError[];
}

interface DashboardState {
  row: DashboardRow;
  publishedYaml: string | null;
  /** Active embeds: not revoked, not expired. */
  embeds: { id: string; version: number; lockedFilters: Record<string, unknown> }[];
}

/** A file's slug: its name without .yaml/.yml (any folder). */
function slugOfPath(filePath: string): string {
  return path.posix.basename(filePath.replaceAll("\\", "/")).replace(/\.ya?ml$/i, "");
}

function readFiles(files: readonly { index: number; file: ManifestFile }[], shared: OrgSharedDatasets): FilePlan[] {
  const seen = new Map<string, string>();
  return files.map(({ file, index }) => {
    const slug = slugOfPath(file.path);
    const errors: PlanError[] = [];
    const at = (message: string): PlanError => ({ file: file.path, line: 1, column: 1, path: "", message });
    if (!/\.ya?ml$/i.test(file.path)) errors.push(at("a manifest file's name ends in .yaml or .yml"));
    const slugCheck = Slug.safeParse(slug);
    if (!slugCheck.success) errors.push(at(`the file name '${slug}' is not a dashboard slug: ${slugCheck.error.issues[0]?.message ?? "invalid"}`));
    const earlier = seen.get(slug);
    if (earlier !== undefined) errors.push(at(`'${earlier}' already names the dashboard '${slug}'`));
    seen.set(slug, file.path);
    // Checked against the shared datasets as the same push leaves them.
    const result = parseDashboardYaml(file.content, { sqlPolicy: SQL_ALLOW_LIST, sharedDatasets: shared.byId });
    if (!result.ok) errors.push(...result.errors.map((e) => ({ file: file.path, line: e.line, column: e.column, path: formatPath(e.path), message: e.message })));
    return { index, file, slug, parsed: result.ok ? result.dashboard : null, errors };
  });
}

const baseOf = (row: DashboardRow | undefined): PlanBase => (row ? { draft_revision: row.draftRevision, published_version: row.publishedVersion } : null);

/** The organization's dashboards as they are now, with their published manifests and active embeds. */
async function currentState(principal: Principal): Promise<Map<string, DashboardState>> {
  return withTenant(principal, async (tx) => {
    const rows = await tx.dashboard.findMany({ orderBy: { slug: "asc" } });
    const published = await tx.dashboardVersion.findMany({
      where: { OR: rows.filter((r) => r.publishedVersion !== null).map((r) => ({ dashboardId: r.id, version: r.publishedVersion! })) },
      select: { dashboardId: true, specYaml: true },
    });
    const embeds = await tx.dashboardEmbed.findMany({ where: { revokedAt: null, expiresAt: { gt: new Date() } }, select: { id: true, dashboardId: true, version: true, lockedFilters: true } });
    const yamlOf = new Map(published.map((v) => [v.dashboardId, v.specYaml]));
    return new Map(
      rows.map((row) => [
        row.slug,
        {
          row,
          publishedYaml: yamlOf.get(row.id) ?? null,
          embeds: embeds.filter((e) => e.dashboardId === row.id).map((e) => ({ id: e.id, version: e.version, lockedFilters: (e.lockedFilters ?? {}) as Record<string, unknown> })),
        },
      ]),
    );
  });
}

/** How long one plan's SQL checks may take in all (each EXPLAIN is bounded by EXPLAIN_TIMEOUT_MS too). */
export const PLAN_SQL_BUDGET_MS = 20_000;

/**
 * Each widget's statements compiled and `EXPLAIN`ed under the read-only role, as the dashboard would
 * run them with its filters at their defaults: unknown tables or columns, type errors and what the
 * reader may not read show here, not on the published dashboard.
 */
async function sqlChecks(scope: TenantScope, timeZone: string, dashboard: ParsedDashboard, deadline: number): Promise<PlanCheck[]> {
  const checks: PlanCheck[] = [];
  const now = new Date();
  for (const widget of dashboard.widgets) {
    const kind = widget.spec.data?.kind;
    if (kind !== "sql" && kind !== "dataset" && kind !== "kpi") continue;
    if (Date.now() >= deadline) {
      // Unchecked SQL is not passed as checked: apply stops, and a smaller plan gets its own budget.
      checks.push({ kind: "sql", severity: "error", widget: widget.metadata.id, message: `not checked: this plan's SQL checks used their ${PLAN_SQL_BUDGET_MS / 1000} s; plan fewer dashboards at once` });
      continue;
    }
    try {
      await runWidgetQuery({
        scope,
        dashboard,
        widgetId: widget.metadata.id,
        filterValues: {},
        now,
        timeZone,
        runner: async (text, values) => {
          await explainReadOnly(scope, text, values, { timeZone });
          return [];
        },
      });
    } catch (error) {
      if (!(error instanceof QueryError)) throw error;
      checks.push({ kind: "sql", severity: "error", widget: widget.metadata.id, message: error.message });
    }
  }
  return checks;
}

function embedAndPublicChecks(dashboard: ParsedDashboard, state: DashboardState | undefined, publishNeeded: boolean): PlanCheck[] {
  const checks: PlanCheck[] = [];
  const filterIds = new Set(dashboard.widgets.filter((w) => w.spec.component === "filter").map((w) => w.metadata.id));
  for (const embed of state?.embeds ?? []) {
    for (const filterId of Object.keys(embed.lockedFilters).filter((id) => !filterIds.has(id))) {
      checks.push({
        kind: "embed",
        severity: "warning",
        widget: filterId,
        message: `embed ${embed.id} locks the filter '${filterId}', which this manifest no longer has: the embed keeps showing version ${embed.version}, and an embed with that locked filter cannot be made again`,
      });
    }
  }
  const platform = dashboard.manifest.platform;
  const activeEmbeds = state?.embeds.length ?? 0;
  if (publishNeeded && !platform.allow_embed && activeEmbeds > 0) {
    checks.push({ kind: "embed", severity: "warning", widget: null, message: `allow_embed is false: publishing stops the ${activeEmbeds} active embed(s) of this dashboard` });
  }
  const wasPublic = state?.publishedYaml ? parseDashboardYaml(state.publishedYaml) : null;
  const publicBefore = wasPublic?.ok ? wasPublic.dashboard.manifest.platform.public : false;
  if (publishNeeded && platform.public) {
    checks.push({ kind: "public", severity: "warning", widget: null, message: publicBefore ? "public dashboard: anyone with its link sees this change once it is published" : "publishing makes this dashboard public: anyone with its link can see it" });
  } else if (publishNeeded && publicBefore) {
    checks.push({ kind: "public", severity: "warning", widget: null, message: "publishing makes this public dashboard private: its public link stops working" });
  }
  return checks;
}

interface Computed {
  plan: Plan;
  files: FilePlan[];
  datasetFiles: DatasetFile[];
  org: OrgState;
  /** The shared datasets as the files leave them: what the dashboards were checked against. */
  sharedAfter: OrgSharedDatasets;
  state: Map<string, DashboardState>;
}

async function compute(principal: Principal, body: { files: ManifestFile[]; prune: boolean }): Promise<Computed> {
  const indexed = body.files.map((file, index) => ({ index, file }));
  const datasetFiles = readDatasetFiles(indexed.filter(({ file }) => isDatasetFile(file.content)));
  const org = await withTenant(principal, orgState);
  const shared = sharedBeforeAfter(principal.orgId, org, datasetFiles);
  const files = readFiles(indexed.filter(({ file }) => !isDatasetFile(file.content)), shared.after);
  const state = await currentState(principal);
  const scope = principalScope(principal);
  const timeZone = (await findOrganization(principal.orgId))?.timeZone ?? "UTC";
  const datasets = await planDatasetFiles(principal, scope, timeZone, datasetFiles, org, shared, new Set(files.filter((f) => f.parsed).map((f) => f.slug)));
  const items: PlanItem[] = [];
  const sqlDeadline = Date.now() + PLAN_SQL_BUDGET_MS;
  for (const f of files) {
    const current = state.get(f.slug);
    const base = baseOf(current?.row);
    if (!f.parsed || f.errors.length > 0) {
      items.push({ slug: f.slug, file: f.file.path, action: "invalid", dashboard_id: current?.row.id ?? null, base, publish_needed: false, diff_vs_draft: null, diff_vs_published: null, errors: f.errors, checks: [] });
      continue;
    }
    const vsDraft = diffManifests(current?.row.draftYaml ?? "", f.file.content);
    const vsPublished = diffManifests(current?.publishedYaml ?? "", f.file.content);
    const publishNeeded = !current?.publishedYaml || vsPublished.changed;
    items.push({
      slug: f.slug,
      file: f.file.path,
      action: !current ? "create" : vsDraft.changed ? "update" : "unchanged",
      dashboard_id: current?.row.id ?? null,
      base,
      publish_needed: publishNeeded,
      diff_vs_draft: current ? vsDraft : null,
      diff_vs_published: current?.publishedYaml ? vsPublished : null,
      errors: [],
      checks: [...(await sqlChecks(scope, timeZone, f.parsed, sqlDeadline)), ...embedAndPublicChecks(f.parsed, current, publishNeeded)],
    });
  }
  const named = new Set(files.map((f) => f.slug));
  for (const [slug, current] of state) {
    if (named.has(slug)) continue;
    items.push({ slug, file: null, action: body.prune ? "delete" : "keep", dashboard_id: current.row.id, base: baseOf(current.row), publish_needed: false, diff_vs_draft: null, diff_vs_published: null, errors: [], checks: [] });
  }
  const valid = items.every((i) => i.errors.length === 0 && i.checks.every((c) => c.severity !== "error")) && datasets.every((d) => d.errors.length === 0);
  return {
    plan: {
      valid,
      changes: items.some((i) => i.action === "create" || i.action === "update" || i.action === "delete") || datasets.some((d) => d.action === "create" || d.action === "update"),
      publishes: items.some((i) => i.action !== "invalid" && i.file !== null && i.publish_needed),
      items,
      datasets,
      expected: Object.fromEntries(items.map((i) => [i.slug, i.base])),
      expected_datasets: Object.fromEntries(datasets.filter((d) => d.id !== "").map((d) => [d.id, d.base])),
    },
    files,
    datasetFiles,
    org,
    sharedAfter: shared.after,
    state,
  };
}

export async function planDashboards(principal: Principal, body: z.output<typeof PlanBody>): Promise<Plan> {
  return (await compute(principal, body)).plan;
}

/** Where a file's problems are reported in a 422. */
const fileAt = (index: number) => ["body", "files", index, "content"];

/** A manifest error as a 422 item under its file: `file:line:column message`. */
function fileProblem(index: number, e: PlanError): ValidationItem {
  return { loc: [...fileAt(index), ...(e.path ? [e.path] : [])], msg: `${e.file}:${e.line}:${e.column} ${e.message}`, type: "manifest", line: e.line, column: e.column };
}

/** A plan's errors and failed checks as 422 items under the file that holds them. */
function problemsOf(computed: Computed): ValidationItem[] {
  const indexOf = new Map(computed.files.map((f) => [f.slug, f.index]));
  const problems = computed.plan.items.flatMap((item) => {
    const index = indexOf.get(item.slug) ?? -1;
    const at = fileAt(index);
    return [
      ...item.errors.map((e) => fileProblem(index, e)),
      ...item.checks.filter((c) => c.severity === "error").map((c) => ({ loc: [...at, ...(c.widget ? [c.widget] : [])], msg: `${item.file}: ${c.widget ? `widget '${c.widget}': ` : ""}${c.message}`, type: c.kind })),
    ];
  });
  const datasetIndex = new Map(computed.datasetFiles.map((f) => [f.file.path, f.index]));
  return [...problems, ...computed.plan.datasets.flatMap((item: DatasetPlanItem) => item.errors.map((e) => fileProblem(datasetIndex.get(item.file) ?? -1, e)))];
}

/**
 * Writes the plan of `files` in one transaction, after checking under lock that every dashboard it
 * touches is still as `expected` says (the state the reviewed plan was made against); otherwise 409
 * naming them, and nothing is written. The writes go through the editor's write path
 * (dashboard-writes.ts): drill-through targets are checked against what the whole push leaves (422
 * under the file, nothing written), and a delete refreshes the organization's rollups.
 */
export async function applyDashboards(principal: Principal, body: z.output<typeof ApplyBody>): Promise<ApplyResult> {
  if (body.publish) assertMayPublish(principal);
  const computed = await compute(principal, body);
  if (!computed.plan.valid) throw new Invalid(problemsOf(computed));
  const fileOf = new Map(computed.files.map((f) => [f.slug, f]));
  let writtenDatasets: string[] = [];
  // The writer checks each manifest again (and drill targets after): against the definitions this apply leaves.
  const result = await withSharedDatasets(computed.sharedAfter, () => writeDashboards(principal, async (writer) => {
    // Every dashboard and shared dataset of the organization, locked until commit: a concurrent edit or apply waits, then sees what this one wrote.
    await writer.tx.$queryRaw`SELECT id FROM dashboards FOR UPDATE`;
    await writer.tx.$queryRaw`SELECT id FROM shared_datasets FOR UPDATE`;
    const versions = new Map((await writer.tx.sharedDataset.findMany({ select: { datasetId: true, version: true } })).map((d) => [d.datasetId, d.version]));
    const rows = new Map((await writer.tx.dashboard.findMany()).map((r) => [r.slug, r]));
    const touched = computed.plan.items.filter((i) => i.action !== "keep");
    const stale: ValidationItem[] = [];
    for (const item of touched) {
      const now = baseOf(rows.get(item.slug));
      const planned = body.expected[item.slug];
      if (planned === undefined) stale.push({ loc: ["body", "expected", item.slug], msg: `${item.slug}: not in the plan`, type: "changed_since_plan" });
      else if (JSON.stringify(now) !== JSON.stringify(planned)) stale.push({ loc: ["body", "expected", item.slug], msg: `${item.slug}: ${describeChange(planned, now)} since the plan`, type: "changed_since_plan" });
    }
    for (const item of computed.plan.datasets) {
      const planned = body.expected_datasets[item.id];
      const now = versions.get(item.id) ?? null;
      if (planned === undefined) stale.push({ loc: ["body", "expected_datasets", item.id], msg: `dataset ${item.id}: not in the plan`, type: "changed_since_plan" });
      else if (planned !== now) stale.push({ loc: ["body", "expected_datasets", item.id], msg: `dataset ${item.id}: ${now === null ? "deleted" : `version ${planned ?? "none"} → ${now}`} since the plan`, type: "changed_since_plan" });
    }
    if (stale.length > 0) throw new Conflict(stale);
    // Datasets first: the dashboards written below were checked against the definitions they leave.
    writtenDatasets = await writeDatasetFiles(writer.tx, principal, computed.datasetFiles, computed.plan.datasets, body.message);

    const meta = (file: ManifestFile): PublishMeta => ({ message: body.message, source: body.source ? { ...body.source, path: body.source.path ?? file.path } : undefined });
    const applied: ApplyResult["items"] = [];
    for (const item of touched) {
      const existing = rows.get(item.slug);
      const f = fileOf.get(item.slug);
      if (item.action === "delete" && existing) {
        await writer.remove(existing);
        applied.push({ slug: item.slug, action: "delete", dashboard_id: existing.id, draft_revision: null, published_version: null, published: false });
        continue;
      }
      if (!f?.parsed) continue;
      const spec = specOf(f, f.parsed);
      let row: DashboardRow;
      if (!existing) row = await writer.create({ name: f.parsed.manifest.metadata.name, slug: item.slug, spec });
      else if (item.action === "update") row = await writer.editDraft(existing, { spec });
      else row = existing;
      const publish = body.publish && item.publish_needed;
      if (publish) row = await writer.publish(row, meta(f.file));
      applied.push({ slug: item.slug, action: item.action === "create" || item.action === "update" ? item.action : "unchanged", dashboard_id: row.id, draft_revision: row.draftRevision, published_version: row.publishedVersion, published: publish });
    }
    for (const item of computed.plan.items.filter((i) => i.action === "keep")) {
      applied.push({ slug: item.slug, action: "keep", dashboard_id: item.dashboard_id, draft_revision: item.base?.draft_revision ?? null, published_version: item.base?.published_version ?? null, published: false });
    }
    const datasets = computed.plan.datasets.map((d) => ({ id: d.id, action: d.action === "invalid" ? ("unchanged" as const) : d.action, version: d.action === "unchanged" ? d.base : (versions.get(d.id) ?? 0) + 1 }));
    return { items: applied, datasets };
  }));
  afterDatasetWrite(principal.orgId, computed.org, writtenDatasets);
  return result;
}

/** A file's manifest as the writer takes it: what the writer finds wrong in it is reported under the file, as the plan's errors are. */
function specOf(f: FilePlan, manifest: ParsedDashboard): DraftSpec {
  return {
    yaml: f.file.content,
    manifest,
    locate: (items) => manifestErrorsFromItems(items).map((e) => fileProblem(f.index, { file: f.file.path, line: e.line, column: e.column, path: formatPath(e.path), message: e.message })),
  };
}

function describeChange(planned: PlanBase, now: PlanBase): string {
  if (!planned) return "created";
  if (!now) return "deleted";
  const parts = [];
  if (now.draft_revision !== planned.draft_revision) parts.push(`draft edited (revision ${planned.draft_revision} → ${now.draft_revision})`);
  if (now.published_version !== planned.published_version) parts.push(`published (version ${planned.published_version ?? "none"} → ${now.published_version})`);
  return parts.join(", ");
}
