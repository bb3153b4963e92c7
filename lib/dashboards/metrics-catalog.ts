import "server-only";
import type { z } from "zod";
import type { Principal } from "@/lib/access/roles";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import { NotFound } from "@/lib/errors";
import { parseAllDocuments } from "yaml";
import { newId } from "@/lib/ids";
import { parseDatasetYaml } from "@/lib/manifest-check/parse";
import type { DatasetManifest, ParsedDashboard, WidgetManifest } from "@/lib/manifest/schema";
import { datasetOf, datasetRefs } from "@/lib/manifest/shared-datasets";
import { pageBody } from "@/lib/pagination";
import { QueryError } from "@/lib/query/errors";
import { runWidgetQuery } from "@/lib/query/run";
import { findOrganization } from "@/lib/auth/directory";
import { principalScope } from "./policy";
import type { ListMetricsQuery } from "./metrics-contract";
import type { CatalogMetric, MetricSeries } from "@/lib/datasets/contract";
import { definitionHash } from "@/lib/datasets/definition";

/**
 * The metrics catalog (issue 48 §3) over the organization's shared datasets. Where a metric is used is read from the
 * dashboards' manifests as written (their `{ ref }` datasets and the widgets naming them), drafts and published
 * versions both. A certification counts only while its definition hash is the metric's current one.
 */

interface Row {
  id: string;
  datasetId: string;
  name: string;
  owner: string | null;
  specYaml: string;
  version: number;
}

async function usesOf(tx: TenantTx): Promise<Map<string, CatalogMetric["used_by"]>> {
  const dashboards = await tx.dashboard.findMany({ select: { id: true, slug: true, name: true, draftYaml: true, publishedVersion: true }, orderBy: { slug: "asc" } });
  const published = await tx.dashboardVersion.findMany({
    where: { OR: dashboards.filter((d) => d.publishedVersion !== null).map((d) => ({ dashboardId: d.id, version: d.publishedVersion! })) },
    select: { dashboardId: true, specYaml: true },
  });
  const publishedYaml = new Map(published.map((v) => [v.dashboardId, v.specYaml]));
  const uses = new Map<string, CatalogMetric["used_by"]>();
  for (const dashboard of dashboards) {
    const sides = [
      { yaml: publishedYaml.get(dashboard.id), published: true },
      { yaml: dashboard.draftYaml, published: false },
    ];
    const seen = new Set<string>();
    for (const side of sides) {
      if (!side.yaml) continue;
      const refs = new Set(datasetRefs(side.yaml));
      if (refs.size === 0) continue;
      for (const widget of writtenWidgets(side.yaml)) {
        const data = widget.spec?.data;
        if (data?.kind !== "dataset" || !data.dataset || !refs.has(data.dataset)) continue;
        for (const column of new Set([...(data.columns ?? []), ...Object.values(data.mappings ?? {}).flat()])) {
          const key = `${data.dataset}:${column}:${widget.metadata?.id}`;
          if (seen.has(key)) continue;
          seen.add(key);
          const list = uses.get(`${data.dataset}:${column}`) ?? [];
          list.push({ dashboard: dashboard.slug, dashboard_name: dashboard.name, widget: String(widget.metadata?.id ?? ""), published: side.published });
          uses.set(`${data.dataset}:${column}`, list);
        }
      }
    }
  }
  return uses;
}

/** The widget manifests of a dashboard's YAML as written (documents after the first, and `spec.widgets`). */
function writtenWidgets(yaml: string): Partial<WidgetManifest>[] {
  // Stored manifests passed validation when written; only their shape is read here.
  const documents = parseAllDocuments(yaml, { uniqueKeys: false }).flatMap((d) => ("toJS" in d ? [d.toJS({ maxAliasCount: 200 }) as Record<string, unknown>] : []));
  const [first, ...rest] = documents;
  const inline = ((first?.spec as { widgets?: unknown } | undefined)?.widgets ?? []) as Partial<WidgetManifest>[];
  return [...(Array.isArray(inline) ? inline : []), ...(rest as Partial<WidgetManifest>[])];
}

function metricsOf(row: Row, manifest: DatasetManifest, marks: Map<string, { definitionHash: string; certifiedBy: string; certifiedAt: Date }>, uses: Map<string, CatalogMetric["used_by"]>): CatalogMetric[] {
  return manifest.spec.metrics.map((metric) => {
    const mark = marks.get(`${row.id}:${metric.id}`);
    const certified = mark && mark.definitionHash === definitionHash(manifest, metric) ? { by: mark.certifiedBy, at: mark.certifiedAt.toISOString() } : null;
    const usedBy = [metric.id, ...(metric.aliases ?? [])].flatMap((id) => uses.get(`${row.datasetId}:${id}`) ?? []);
    return {
      dataset: row.datasetId,
      dataset_name: row.name,
      id: metric.id,
      label: metric.label ?? null,
      type: metric.type,
      expression: metric.expression,
      aliases: metric.aliases ?? [],
      source: manifest.spec.from ?? manifest.spec.query ?? (manifest.spec.kpi !== undefined ? `kpi ${manifest.spec.kpi}` : null),
      owner: row.owner,
      dataset_version: row.version,
      certification: certified,
      used_by: usedBy,
    };
  });
}

async function catalog(tx: TenantTx): Promise<{ rows: Row[]; metrics: CatalogMetric[] }> {
  const rows = await tx.sharedDataset.findMany({ select: { id: true, datasetId: true, name: true, owner: true, specYaml: true, version: true }, orderBy: { datasetId: "asc" } });
  const marks = new Map((await tx.metricCertification.findMany()).map((m) => [`${m.sharedDatasetId}:${m.metricId}`, m]));
  const uses = await usesOf(tx);
  const metrics = rows.flatMap((row) => {
    const parsed = parseDatasetYaml(row.specYaml);
    return parsed.ok ? metricsOf(row, parsed.value, marks, uses) : [];
  });
  return { rows, metrics };
}

export async function listMetrics(principal: Principal, query: z.output<typeof ListMetricsQuery>) {
  return withTenant(principal, async (tx) => {
    const { metrics } = await catalog(tx);
    const wanted = query.certified === undefined ? metrics : metrics.filter((m) => (m.certification !== null) === (query.certified === "true"));
    return pageBody(wanted.slice(query.offset, query.offset + query.limit), wanted.length, query);
  });
}

async function oneMetric(tx: TenantTx, dataset: string, metric: string): Promise<{ row: Row; manifest: DatasetManifest; metric: CatalogMetric }> {
  const { rows, metrics } = await catalog(tx);
  const found = metrics.find((m) => m.dataset === dataset && m.id === metric);
  const row = rows.find((r) => r.datasetId === dataset);
  const parsed = row ? parseDatasetYaml(row.specYaml) : null;
  if (!found || !row || !parsed?.ok) throw new NotFound(`no metric '${metric}' in a shared dataset '${dataset}'`);
  return { row, manifest: parsed.value, metric: found };
}

export async function certifyMetric(principal: Principal, dataset: string, metric: string): Promise<CatalogMetric> {
  return withTenant(principal, async (tx) => {
    const { row, manifest } = await oneMetric(tx, dataset, metric);
    const definition = manifest.spec.metrics.find((m) => m.id === metric)!;
    const mark = { definitionHash: definitionHash(manifest, definition), certifiedBy: principal.userId, certifiedAt: new Date() };
    await tx.metricCertification.upsert({
      where: { sharedDatasetId_metricId: { sharedDatasetId: row.id, metricId: metric } },
      create: { id: newId("mcr"), orgId: principal.orgId, sharedDatasetId: row.id, metricId: metric, ...mark },
      update: mark,
    });
    return (await oneMetric(tx, dataset, metric)).metric;
  });
}

export async function uncertifyMetric(principal: Principal, dataset: string, metric: string): Promise<CatalogMetric> {
  return withTenant(principal, async (tx) => {
    const { row } = await oneMetric(tx, dataset, metric);
    await tx.metricCertification.deleteMany({ where: { sharedDatasetId: row.id, metricId: metric } });
    return (await oneMetric(tx, dataset, metric)).metric;
  });
}

const SERIES_POINTS = 24;

/** The metric grouped by its dataset's time dimension (the first rollup's) or first dimension, through the query engine. */
export async function metricSeries(principal: Principal, dataset: string, metric: string): Promise<MetricSeries> {
  const { manifest } = await withTenant(principal, (tx) => oneMetric(tx, dataset, metric));
  const resolved = datasetOf(manifest);
  const dimension = manifest.spec.rollups?.[0]?.time_dimension ?? manifest.spec.dimensions[0]?.id ?? null;
  const widget: WidgetManifest = {
    version: "1.0",
    kind: "widget",
    metadata: { id: "series", name: metric },
    spec: { component: "table", layout: { x: 0, y: 0, w: 1, h: 1 }, data: { kind: "dataset", dataset: resolved.id, columns: dimension ? [dimension, metric] : [metric] }, display: {}, filters: [], bindings: [] },
  };
  const dashboard: ParsedDashboard = {
    manifest: {
      version: "1.0",
      kind: "dashboard",
      metadata: { id: "metric_series", name: metric },
      platform: { scope: "org", roles: ["admin", "general_manager", "analyst"], allow_embed: false, public: false, downloads: { pdf: false, png: false } },
      spec: { datasets: [resolved], tabs: [] },
    },
    widgets: [widget],
    widgetsById: new Map([["series", widget]]),
    datasets: new Map([[resolved.id, resolved]]),
  };
  const timeZone = (await findOrganization(principal.orgId))?.timeZone ?? "UTC";
  try {
    const result = await runWidgetQuery({ scope: principalScope(principal), dashboard, widgetId: "series", filterValues: {}, now: new Date(), timeZone, rowCap: 1000 });
    const rows = dimension ? [...result.rows].sort((a, b) => String(a[dimension]).localeCompare(String(b[dimension]))) : result.rows;
    const points = rows.slice(-SERIES_POINTS).map((r) => ({ label: dimension ? labelOf(r[dimension]) : metric, value: toNumber(r[metric]) }));
    return { dimension, points, error: null };
  } catch (error) {
    if (!(error instanceof QueryError)) throw error;
    return { dimension, points: [], error: error.message };
  }
}

const labelOf = (value: unknown) => (value instanceof Date ? value.toISOString().slice(0, 10) : String(value ?? ""));
const toNumber = (value: unknown) => {
  const n = typeof value === "number" ? value : typeof value === "string" || typeof value === "bigint" ? Number(value) : NaN;
  return Number.isFinite(n) ? n : null;
};
