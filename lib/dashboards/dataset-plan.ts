import "server-only";
import type { Principal } from "@/lib/access/roles";
import type { TenantScope, TenantTx } from "@/lib/db/tenant";
import { newId } from "@/lib/ids";
import { formatPath } from "@/lib/manifest/errors";
import { parseDashboardYaml, parseDatasetYaml } from "@/lib/manifest-check/parse";
import type { DatasetManifest, ParsedDashboard } from "@/lib/manifest/schema";
import { datasetRefs } from "@/lib/manifest/shared-datasets";
import { ManifestSource } from "@/lib/manifest/source";
import { QueryError } from "@/lib/query/errors";
import { runWidgetQuery } from "@/lib/query/run";
import { SQL_ALLOW_LIST } from "./manifest";
import { forgetDashboardResults } from "./result-cache";
import type { ColumnChange, DatasetPlanItem, ImpactReader, ImpactValues } from "@/lib/datasets/contract";
import { type OrgSharedDatasets, forgetSharedDatasets, sharedDatasetsFrom } from "@/lib/datasets/store";
import { definitionHash } from "@/lib/datasets/definition";

/**
 * Shared dataset files in a plan (issue 48 §1-2). A file whose document says `kind: dataset` is a dataset; its
 * identity is `metadata.id`. The plan answers what would change per column and who reads it (every widget, embed,
 * report schedule and alert of a dashboard naming it), each run through the query engine with its own filters on the
 * definitions before and after; a change that leaves a stored dashboard (draft or published version) invalid is an
 * error: a removed or renamed column still read is refused unless an alias carries it on.
 */

interface ManifestFile {
  path: string;
  content: string;
}

export interface DatasetFile {
  index: number;
  file: ManifestFile;
  parsed: DatasetManifest | null;
  errors: DatasetPlanItem["errors"];
}

/** Whether a file's (first) document is a dataset manifest. */
export function isDatasetFile(content: string): boolean {
  const { source, errors } = ManifestSource.parse(content);
  return errors.length === 0 && source.documents[0]?.get("kind") === "dataset";
}

export function readDatasetFiles(files: readonly { index: number; file: ManifestFile }[]): DatasetFile[] {
  const seen = new Map<string, string>();
  return files.map(({ index, file }) => {
    const result = parseDatasetYaml(file.content, { sqlPolicy: SQL_ALLOW_LIST });
    const errors = result.ok ? [] : result.errors.map((e) => ({ file: file.path, line: e.line, column: e.column, path: formatPath(e.path), message: e.message }));
    if (result.ok) {
      const earlier = seen.get(result.value.metadata.id);
      if (earlier !== undefined) errors.push({ file: file.path, line: 1, column: 1, path: "metadata.id", message: `'${earlier}' already defines the dataset '${result.value.metadata.id}'` });
      seen.set(result.value.metadata.id, file.path);
    }
    return { index, file, parsed: result.ok ? result.value : null, errors };
  });
}

export interface StoredDataset {
  id: string;
  datasetId: string;
  specYaml: string;
  version: number;
}

interface StoredDashboard {
  id: string;
  slug: string;
  draftYaml: string;
  publishedVersion: number | null;
  publishedYaml: string | null;
}

export interface OrgState {
  datasets: Map<string, StoredDataset>;
  dashboards: StoredDashboard[];
  embeds: { id: string; dashboardId: string; version: number; lockedFilters: Record<string, unknown>; yaml: string }[];
  schedules: { id: string; dashboardId: string; name: string; filters: Record<string, unknown> }[];
  alerts: { id: string; dashboardId: string; name: string; widgetId: string; filters: Record<string, unknown> }[];
}

export async function orgState(tx: TenantTx): Promise<OrgState> {
  const datasets = await tx.sharedDataset.findMany({ select: { id: true, datasetId: true, specYaml: true, version: true } });
  const rows = await tx.dashboard.findMany({ select: { id: true, slug: true, draftYaml: true, publishedVersion: true }, orderBy: { slug: "asc" } });
  const published = await tx.dashboardVersion.findMany({
    where: { OR: rows.filter((r) => r.publishedVersion !== null).map((r) => ({ dashboardId: r.id, version: r.publishedVersion! })) },
    select: { dashboardId: true, specYaml: true },
  });
  const yamlOf = new Map(published.map((v) => [v.dashboardId, v.specYaml]));
  const embedRows = await tx.dashboardEmbed.findMany({ where: { revokedAt: null, expiresAt: { gt: new Date() } }, select: { id: true, dashboardId: true, version: true, lockedFilters: true } });
  const embedVersions = await tx.dashboardVersion.findMany({
    where: { OR: embedRows.map((e) => ({ dashboardId: e.dashboardId, version: e.version })) },
    select: { dashboardId: true, version: true, specYaml: true },
  });
  const versionYaml = new Map(embedVersions.map((v) => [`${v.dashboardId}:${v.version}`, v.specYaml]));
  const schedules = await tx.reportSchedule.findMany({ select: { id: true, dashboardId: true, name: true, filters: true } });
  const alerts = await tx.widgetAlert.findMany({ select: { id: true, dashboardId: true, name: true, widgetId: true, definition: true } });
  return {
    datasets: new Map(datasets.map((d) => [d.datasetId, d])),
    dashboards: rows.map((r) => ({ ...r, publishedYaml: yamlOf.get(r.id) ?? null })),
    embeds: embedRows.map((e) => ({ ...e, lockedFilters: (e.lockedFilters ?? {}) as Record<string, unknown>, yaml: versionYaml.get(`${e.dashboardId}:${e.version}`) ?? "" })),
    schedules: schedules.map((s) => ({ ...s, filters: (s.filters ?? {}) as Record<string, unknown> })),
    alerts: alerts.map((a) => ({ id: a.id, dashboardId: a.dashboardId, name: a.name, widgetId: a.widgetId, filters: ((a.definition as { filters?: Record<string, unknown> })?.filters ?? {}) })),
  };
}

/** The definitions as they are, and as the files would leave them. */
export function sharedBeforeAfter(orgId: string, state: OrgState, files: readonly DatasetFile[]): { before: OrgSharedDatasets; after: OrgSharedDatasets } {
  const stored = [...state.datasets.values()];
  const before = sharedDatasetsFrom(orgId, stored);
  const afterRows = new Map(stored.map((d) => [d.datasetId, d.specYaml]));
  for (const f of files) if (f.parsed && f.errors.length === 0) afterRows.set(f.parsed.metadata.id, f.file.content);
  return { before, after: sharedDatasetsFrom(orgId, [...afterRows].map(([datasetId, specYaml]) => ({ datasetId, specYaml }))) };
}

/** Per column: added, removed (or renamed through an alias), or defined otherwise. */
export function columnChanges(before: DatasetManifest | undefined, after: DatasetManifest): ColumnChange[] {
  const changes: ColumnChange[] = [];
  for (const kind of ["dimensions", "metrics"] as const) {
    const label = kind === "dimensions" ? "dimension" : "metric";
    const old = new Map((before?.spec[kind] ?? []).map((c) => [c.id, c]));
    const now = new Map(after.spec[kind].map((c) => [c.id, c]));
    for (const [id, column] of now) {
      const previous = old.get(id);
      if (!previous) changes.push({ column: id, kind: label, change: "added", successor: null });
      else if (definitionHash(before!, previous) !== definitionHash(after, column)) changes.push({ column: id, kind: label, change: "changed", successor: null });
    }
    for (const id of old.keys()) {
      if (now.has(id)) continue;
      const successor = after.spec[kind].find((c) => c.aliases?.includes(id));
      changes.push({ column: id, kind: label, change: successor ? "renamed" : "removed", successor: successor?.id ?? null });
    }
  }
  return changes;
}

/** How long one plan may spend running widgets for before/after values; readers past it are listed without values. */
export const IMPACT_BUDGET_MS = 20_000;
const SHOWN_ROWS = 10;

interface ImpactContext {
  scope: TenantScope;
  timeZone: string;
  now: Date;
  deadline: number;
}

async function valuesOf(context: ImpactContext, dashboard: ParsedDashboard | null, widgetId: string, filters: Record<string, unknown>): Promise<ImpactValues> {
  if (!dashboard) return { columns: [], rows: [], error: "the dashboard does not validate with this definition" };
  if (Date.now() >= context.deadline) return { columns: [], rows: [], error: `not run: this plan's ${IMPACT_BUDGET_MS / 1000} s for values were used` };
  try {
    const result = await runWidgetQuery({ scope: context.scope, dashboard, widgetId, filterValues: filters, now: context.now, timeZone: context.timeZone, rowCap: SHOWN_ROWS });
    return { columns: result.columns, rows: result.rows.slice(0, SHOWN_ROWS), error: null };
  } catch (error) {
    if (!(error instanceof QueryError)) throw error;
    return { columns: [], rows: [], error: error.message };
  }
}

const parsedWith = (yaml: string, shared: OrgSharedDatasets) => {
  const result = parseDashboardYaml(yaml, { sqlPolicy: SQL_ALLOW_LIST, sharedDatasets: shared.byId });
  return result.ok ? { ok: true as const, dashboard: result.dashboard } : { ok: false as const, errors: result.errors };
};

/**
 * The plan items of dataset files: changes, the readers of each changed dataset with values before and after, and
 * the stored dashboards the change would break (except drafts the same push replaces: `replacedDrafts`, by slug).
 */
export async function planDatasetFiles(
  principal: Principal,
  scope: TenantScope,
  timeZone: string,
  files: readonly DatasetFile[],
  state: OrgState,
  shared: { before: OrgSharedDatasets; after: OrgSharedDatasets },
  replacedDrafts: ReadonlySet<string>,
): Promise<DatasetPlanItem[]> {
  const context: ImpactContext = { scope, timeZone, now: new Date(), deadline: Date.now() + IMPACT_BUDGET_MS };
  const items: DatasetPlanItem[] = [];
  for (const f of files) {
    const id = f.parsed?.metadata.id ?? "";
    const stored = state.datasets.get(id);
    if (!f.parsed || f.errors.length > 0) {
      items.push({ id, file: f.file.path, action: "invalid", base: stored?.version ?? null, changes: [], readers: [], errors: f.errors });
      continue;
    }
    const before = shared.before.byId.get(id);
    const changes = columnChanges(before, f.parsed);
    const sourceChanged = before !== undefined && JSON.stringify(sourceOf(before)) !== JSON.stringify(sourceOf(f.parsed));
    const unchanged = before !== undefined && changes.length === 0 && !sourceChanged && JSON.stringify(before) === JSON.stringify(f.parsed);
    const errors: DatasetPlanItem["errors"] = [];
    const readers: ImpactReader[] = [];
    if (before && !unchanged) {
      const touched = new Set(changes.filter((c) => c.change !== "added").map((c) => c.column));
      const reads = (columns: readonly string[] | undefined) => sourceChanged || (columns ?? []).some((c) => touched.has(c));
      for (const dashboard of state.dashboards) {
        const sides = [
          ...(replacedDrafts.has(dashboard.slug) ? [] : [{ what: "draft", yaml: dashboard.draftYaml }]),
          ...(dashboard.publishedYaml ? [{ what: `published version ${dashboard.publishedVersion}`, yaml: dashboard.publishedYaml }] : []),
        ].filter((side) => datasetRefs(side.yaml).includes(id));
        for (const side of sides) {
          const after = parsedWith(side.yaml, shared.after);
          if (!after.ok) for (const e of after.errors) errors.push({ file: f.file.path, line: 1, column: 1, path: "", message: `dashboard '${dashboard.slug}' (${side.what}) would break: ${formatPath(e.path)}: ${e.message}` });
        }
        const shownYaml = dashboard.publishedYaml && datasetRefs(dashboard.publishedYaml).includes(id) ? dashboard.publishedYaml : datasetRefs(dashboard.draftYaml).includes(id) ? dashboard.draftYaml : null;
        if (!shownYaml) continue;
        const beforeParsed = parsedWith(shownYaml, shared.before);
        const afterParsed = parsedWith(shownYaml, shared.after);
        const parsedBefore = beforeParsed.ok ? beforeParsed.dashboard : null;
        const parsedAfter = afterParsed.ok ? afterParsed.dashboard : null;
        const widgetsOf = (parsedBefore ?? parsedAfter)?.widgets ?? [];
        const readingWidgets = widgetsOf.filter((w) => w.spec.data?.kind === "dataset" && w.spec.data.dataset === id && reads(widgetColumns(w)));
        const reader = async (kind: ImpactReader["kind"], widget: string, filters: Record<string, unknown>, extra: { id: string | null; name: string | null }, yaml?: string) => {
          const b = yaml ? parsedWith(yaml, shared.before) : null;
          const a = yaml ? parsedWith(yaml, shared.after) : null;
          const beforeValues = await valuesOf(context, b ? (b.ok ? b.dashboard : null) : parsedBefore, widget, filters);
          const afterValues = await valuesOf(context, a ? (a.ok ? a.dashboard : null) : parsedAfter, widget, filters);
          readers.push({ kind, dashboard: dashboard.slug, widget, ...extra, filters, before: beforeValues, after: afterValues, changed: JSON.stringify(beforeValues) !== JSON.stringify(afterValues) });
        };
        for (const widget of readingWidgets) {
          await reader("widget", widget.metadata.id, {}, { id: null, name: widget.metadata.name });
          for (const alert of state.alerts.filter((a) => a.dashboardId === dashboard.id && a.widgetId === widget.metadata.id)) {
            await reader("alert", widget.metadata.id, alert.filters, { id: alert.id, name: alert.name });
          }
        }
        for (const embed of state.embeds.filter((e) => e.dashboardId === dashboard.id && datasetRefs(e.yaml).includes(id))) {
          const parsedEmbed = parsedWith(embed.yaml, shared.before);
          const embedWidgets = parsedEmbed.ok ? parsedEmbed.dashboard.widgets : [];
          for (const widget of embedWidgets.filter((w) => w.spec.data?.kind === "dataset" && w.spec.data.dataset === id && reads(widgetColumns(w)))) {
            await reader("embed", widget.metadata.id, embed.lockedFilters, { id: embed.id, name: `embed of version ${embed.version}` }, embed.yaml);
          }
        }
        for (const schedule of state.schedules.filter((s) => s.dashboardId === dashboard.id)) {
          for (const widget of readingWidgets) await reader("report_schedule", widget.metadata.id, schedule.filters, { id: schedule.id, name: schedule.name });
        }
      }
    }
    items.push({ id, file: f.file.path, action: !stored ? "create" : unchanged ? "unchanged" : "update", base: stored?.version ?? null, changes, readers, errors });
  }
  return items;
}

const sourceOf = (m: DatasetManifest) => ({ from: m.spec.from, query: m.spec.query, kpi: m.spec.kpi });

/** The columns a widget reads: its listed columns, mappings, filter fields and the kpi delta. */
function widgetColumns(widget: ParsedDashboard["widgets"][number]): string[] {
  const data = widget.spec.data;
  return [
    ...(data?.columns ?? []),
    ...Object.values(data?.mappings ?? {}).flat(),
    ...widget.spec.filters.map((f) => f.field),
    ...(widget.spec.display.kpi?.delta ? [widget.spec.display.kpi.delta.column] : []),
  ];
}

/**
 * Writes the planned dataset files (create or update) in the caller's transaction: a new version each, and the
 * certification of every metric whose definition changed removed. Returns the ids written.
 */
export async function writeDatasetFiles(tx: TenantTx, principal: Principal, files: readonly DatasetFile[], items: readonly DatasetPlanItem[], message?: string): Promise<string[]> {
  const written: string[] = [];
  for (const item of items.filter((i) => i.action === "create" || i.action === "update")) {
    const f = files.find((x) => x.parsed?.metadata.id === item.id);
    if (!f?.parsed) continue;
    const manifest = f.parsed;
    const existing = await tx.sharedDataset.findUnique({ where: { orgId_datasetId: { orgId: principal.orgId, datasetId: item.id } } });
    const version = (existing?.version ?? 0) + 1;
    const fields = { name: manifest.metadata.name, owner: manifest.metadata.owner ?? null, specYaml: f.file.content, version, updatedBy: principal.userId, updatedAt: new Date() };
    const row = existing
      ? await tx.sharedDataset.update({ where: { id: existing.id }, data: fields })
      : await tx.sharedDataset.create({ data: { id: newId("sds"), orgId: principal.orgId, datasetId: item.id, ...fields } });
    await tx.sharedDatasetVersion.create({ data: { id: newId("sdv"), orgId: principal.orgId, sharedDatasetId: row.id, version, specYaml: f.file.content, message: message ?? null, createdBy: principal.userId } });
    // A certification holds for the definition it was given to: any other definition loses it, in this transaction.
    const marks = await tx.metricCertification.findMany({ where: { sharedDatasetId: row.id } });
    for (const mark of marks) {
      const metric = manifest.spec.metrics.find((m) => m.id === mark.metricId);
      if (!metric || definitionHash(manifest, metric) !== mark.definitionHash) await tx.metricCertification.delete({ where: { id: mark.id } });
    }
    written.push(item.id);
  }
  return written;
}

/** After commit: the organization's parses read the new definitions, and results cached under the old ones go. */
export function afterDatasetWrite(orgId: string, state: OrgState, written: readonly string[]): void {
  if (written.length === 0) return;
  forgetSharedDatasets(orgId);
  for (const dashboard of state.dashboards) {
    if ([dashboard.draftYaml, dashboard.publishedYaml ?? ""].some((yaml) => datasetRefs(yaml).some((ref) => written.includes(ref)))) forgetDashboardResults(orgId, dashboard.id);
  }
}

