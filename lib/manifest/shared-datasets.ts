import { parseAllDocuments } from "yaml";
import type { Dataset, DatasetManifest, DashboardManifest, WrittenDashboardManifest } from "./schema";
import type { ManifestPath } from "./source";

/**
 * The one place a dashboard's `{ ref: <id> }` datasets become datasets (issue 48): everything past parsing (the query
 * engine, rollups, alerts, reports, embeds) reads the resolved manifest and never sees a ref.
 *
 * A shared column's `aliases` become columns of their own with the same definition, so a dashboard written against
 * the old id reads exactly what the new id reads.
 */

/** The organization's shared datasets by id, or `unchecked` where they are not at hand (the browser, `quarry validate` without the files). */
export type SharedDatasets = ReadonlyMap<string, DatasetManifest> | "unchecked";

export interface ResolvedDatasets {
  manifest: DashboardManifest;
  /** Refs left unresolved because the shared datasets were not at hand: their widgets' columns are unknown until run. */
  unchecked: ReadonlySet<string>;
}

/** The dataset a shared manifest defines, under its id, its aliases expanded into columns. */
export function datasetOf(shared: DatasetManifest): Dataset {
  const expand = <C extends { id: string; aliases?: string[] }>(columns: C[]): Omit<C, "aliases">[] =>
    columns.flatMap(({ aliases, ...column }) => [column, ...(aliases ?? []).map((alias) => ({ ...column, id: alias }))]);
  return { ...shared.spec, id: shared.metadata.id, dimensions: expand(shared.spec.dimensions), metrics: expand(shared.spec.metrics) };
}

export function resolveDatasets(
  written: WrittenDashboardManifest,
  shared: SharedDatasets,
  report: (path: ManifestPath, message: string) => void,
): ResolvedDatasets {
  const unchecked = new Set<string>();
  const datasets: Dataset[] = [];
  written.spec.datasets.forEach((entry, i) => {
    if (!("ref" in entry)) return void datasets.push(entry);
    if (shared === "unchecked") return void unchecked.add(entry.ref);
    const found = shared.get(entry.ref);
    if (found) datasets.push(datasetOf(found));
    else report(["spec", "datasets", i, "ref"], `no shared dataset has id '${entry.ref}' in this organization; shared: ${[...shared.keys()].join(", ") || "none"}`);
  });
  return { manifest: { ...written, spec: { ...written.spec, datasets } }, unchecked };
}

/** The shared datasets a dashboard's YAML names by `{ ref }`, read as written (also when it does not validate). */
export function datasetRefs(specYaml: string): string[] {
  let first: unknown;
  try {
    const [document] = parseAllDocuments(specYaml, { uniqueKeys: false });
    first = document && "toJS" in document ? document.toJS({ maxAliasCount: 200 }) : null;
  } catch {
    return [];
  }
  const datasets = (first as { spec?: { datasets?: unknown } } | null)?.spec?.datasets;
  if (!Array.isArray(datasets)) return [];
  return datasets.flatMap((d) => (d && typeof d === "object" && typeof (d as { ref?: unknown }).ref === "string" ? [(d as { ref: string }).ref] : []));
}
