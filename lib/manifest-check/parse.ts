import type { z } from "zod";
import type { ManifestError } from "@/lib/manifest/errors";
import { DashboardManifest, DatasetManifest, type ParsedDashboard, WidgetManifest } from "@/lib/manifest/schema";
import { type SharedDatasets, resolveDatasets } from "@/lib/manifest/shared-datasets";
import { type ManifestPath, ManifestSource } from "@/lib/manifest/source";
import { checkManifestAlerts } from "./alerts";
import { checkFilterDefaults } from "./filter-defaults";
import { type DrillTargetManifest, checkInteractions } from "./interactions";
import { type PlacedWidget, type SqlPolicy, checkDataset, checkReferences } from "./references";

export type ParseResult<T> = { ok: true; value: T } | { ok: false; errors: ManifestError[] };

/**
 * Parses a dashboard's `spec_yaml`: the dashboard manifest first, then widget manifests
 * as further `---` documents and/or under `spec.widgets`. Reports every problem at once,
 * each with its path, line and column; never throws for bad input. `sharedDatasets` resolves `{ ref }` datasets
 * (the server always passes the organization's; without them refs are left unchecked, their widgets' columns unknown).
 */
export function parseDashboardYaml(
  text: string,
  options: { sqlPolicy?: SqlPolicy; drillTargets?: ReadonlyMap<string, DrillTargetManifest | null>; sharedDatasets?: SharedDatasets } = {},
): { ok: true; dashboard: ParsedDashboard } | { ok: false; errors: ManifestError[] } {
  const { source, errors } = ManifestSource.parse(text);
  if (errors.length > 0) return { ok: false, errors: sortErrors(errors) };
  const documents = source.documents.map((doc, index) => ({ index, doc })).filter(({ doc }) => doc.contents !== null);
  if (documents.length === 0) return { ok: false, errors: [{ document: 0, path: [], line: 1, column: 1, message: "the manifest is empty" }] };

  const [first, ...rest] = documents;
  const written = validate(DashboardManifest, source, first.index, errors);
  const resolved = written && resolveDatasets(written, options.sharedDatasets ?? "unchecked", (path, message) => errors.push(source.error(first.index, path, message)));
  const dashboard = resolved?.manifest ?? null;
  const firstKind = kindOf(source, first.index);
  if (!dashboard && firstKind === "widget") errors.unshift(source.error(first.index, ["kind"], "the first document must be the dashboard manifest (kind: dashboard); widgets follow after ---"));

  const widgets: PlacedWidget[] = [];
  const invalidWidgetIds = new Set<string>();
  dashboard?.spec.widgets?.forEach((manifest, i) => widgets.push({ manifest, document: first.index, path: ["spec", "widgets", i] }));
  for (const { index } of rest) {
    if (kindOf(source, index) === "dashboard") {
      errors.push(source.error(index, ["kind"], "only the first document may be a dashboard; later documents are widgets"));
      continue;
    }
    const manifest = validate(WidgetManifest, source, index, errors);
    if (manifest) widgets.push({ manifest, document: index, path: [] });
    else {
      const id = source.documents[index].getIn(["metadata", "id"]);
      if (typeof id === "string") invalidWidgetIds.add(id);
    }
  }
  if (!dashboard) return { ok: false, errors: sortErrors(errors) };

  errors.push(...checkReferences(dashboard, widgets, source, invalidWidgetIds, options.sqlPolicy, resolved?.unchecked));
  checkFilterDefaults(widgets, (document, path, message) => errors.push(source.error(document, path, message)));
  checkInteractions(dashboard, widgets, (document, path, message) => errors.push(source.error(document, path, message)), options.drillTargets);
  checkManifestAlerts(dashboard, widgets, (document, path, message) => errors.push(source.error(document, path, message)));
  if (errors.length > 0) return { ok: false, errors: sortErrors(errors) };
  return {
    ok: true,
    dashboard: {
      manifest: dashboard,
      widgets: widgets.map((w) => w.manifest),
      widgetsById: new Map(widgets.map((w) => [w.manifest.metadata.id, w.manifest])),
      datasets: new Map(dashboard.spec.datasets.map((d) => [d.id, d])),
    },
  };
}

/**
 * Parses a shared dataset's file (`kind: dataset`, one document) with the checks an inline dataset gets, and its
 * aliases: each unique among the dataset's column ids.
 */
export function parseDatasetYaml(text: string, options: { sqlPolicy?: SqlPolicy } = {}): ParseResult<DatasetManifest> {
  const { source, errors } = ManifestSource.parse(text);
  if (errors.length > 0) return { ok: false, errors: sortErrors(errors) };
  const documents = source.documents.map((doc, index) => ({ index, doc })).filter(({ doc }) => doc.contents !== null);
  if (documents.length !== 1) {
    return { ok: false, errors: [{ document: 0, path: [], line: 1, column: 1, message: documents.length === 0 ? "the manifest is empty" : "a dataset file holds one document (kind: dataset)" }] };
  }
  const { index } = documents[0];
  const manifest = validate(DatasetManifest, source, index, errors);
  if (!manifest) return { ok: false, errors: sortErrors(errors) };
  const report = (_document: number, path: ManifestPath, message: string, extra?: { key?: boolean; offset?: number }) => errors.push(source.error(index, path, message, extra));
  const strip = <C extends { aliases?: string[] }>(columns: C[]) => columns.map(({ aliases: _aliases, ...column }) => column);
  const ids = checkDataset({ ...manifest.spec, id: manifest.metadata.id, dimensions: strip(manifest.spec.dimensions), metrics: strip(manifest.spec.metrics) }, ["spec"], report, options.sqlPolicy);
  for (const kind of ["dimensions", "metrics"] as const) {
    manifest.spec[kind].forEach((column, i) =>
      column.aliases?.forEach((alias, j) => {
        if (ids.has(alias)) report(index, ["spec", kind, i, "aliases", j], `'${alias}' is already a column id of this dataset`);
        ids.add(alias);
      }),
    );
  }
  return errors.length > 0 ? { ok: false, errors: sortErrors(errors) } : { ok: true, value: manifest };
}

/** Parses one or more widget manifests on their own (a widget file), with the checks that need no dashboard. */
export function parseWidgetYaml(text: string): ParseResult<WidgetManifest[]> {
  const { source, errors } = ManifestSource.parse(text);
  if (errors.length > 0) return { ok: false, errors: sortErrors(errors) };
  const manifests: WidgetManifest[] = [];
  source.documents.forEach((doc, index) => {
    if (doc.contents === null) return;
    const manifest = validate(WidgetManifest, source, index, errors);
    if (manifest) manifests.push(manifest);
  });
  if (manifests.length === 0 && errors.length === 0) errors.push({ document: 0, path: [], line: 1, column: 1, message: "the manifest is empty" });
  return errors.length > 0 ? { ok: false, errors: sortErrors(errors) } : { ok: true, value: manifests };
}

/** `kind` of a document, read before validation to pick the schema and explain mix-ups. */
export function kindOf(source: ManifestSource, document: number): unknown {
  return source.documents[document]?.get("kind");
}

function validate<S extends z.ZodType>(schema: S, source: ManifestSource, document: number, errors: ManifestError[]): z.output<S> | null {
  let value: unknown;
  try {
    // maxAliasCount bounds "billion laughs" alias expansion.
    value = source.documents[document].toJS({ maxAliasCount: 200 });
  } catch (error) {
    errors.push({ document, path: [], line: 1, column: 1, message: error instanceof Error ? error.message : "unreadable YAML" });
    return null;
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues) errors.push(...issueErrors(issue, source, document));
  return null;
}

function issueErrors(issue: z.core.$ZodIssue, source: ManifestSource, document: number): ManifestError[] {
  const path = issue.path.filter((p): p is string | number => typeof p !== "symbol");
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => source.error(document, [...path, key], `unknown field '${key}'`, { key: true }));
  }
  if (issue.code === "invalid_union") {
    // Report the branch that got furthest, which is almost always the one the author meant.
    const deepest = issue.errors.flat().sort((a, b) => b.path.length - a.path.length)[0];
    if (deepest && deepest.path.length > 0) return issueErrors({ ...deepest, path: [...issue.path, ...deepest.path] }, source, document);
  }
  const missing = issue.code === "invalid_type" && /received undefined$/.test(issue.message);
  return [source.error(document, path as ManifestPath, missing ? "is required" : issue.message)];
}

function sortErrors(errors: ManifestError[]): ManifestError[] {
  return errors.sort((a, b) => a.line - b.line || a.column - b.column);
}
