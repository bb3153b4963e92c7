import "server-only";
import { AsyncLocalStorage } from "node:async_hooks";
import { createHash } from "node:crypto";
import { withTenant } from "@/lib/db/tenant";
import { parseDatasetYaml } from "@/lib/manifest-check/parse";
import type { DatasetManifest } from "@/lib/manifest/schema";
import { processSingleton } from "@/lib/process-singleton";

/*
 * An organization's shared datasets (`kind: dataset`, migration 0050) as the manifest parse resolves `{ ref }`
 * datasets with them (lib/manifest/shared-datasets.ts). Cached briefly per process, as own tables are: a write in
 * this process forgets the cache at once; another replica sees it within FRESH_MS.
 */

export interface OrgSharedDatasets {
  /** Differs whenever any definition does (with the organization): keys the parse's memo. */
  stamp: string;
  byId: ReadonlyMap<string, DatasetManifest>;
}

const FRESH_MS = 2_000;

const cache = processSingleton("sharedDatasets", () => new Map<string, { at: number; value: Promise<OrgSharedDatasets> }>());

export function sharedDatasetsOf(orgId: string): Promise<OrgSharedDatasets> {
  const entries = cache.get();
  const hit = entries.get(orgId);
  if (hit && Date.now() - hit.at < FRESH_MS) return hit.value;
  const value = read(orgId);
  entries.set(orgId, { at: Date.now(), value });
  value.catch(() => entries.delete(orgId));
  return value;
}

/** After a push: the next parse reads the definitions again. */
export function forgetSharedDatasets(orgId: string): void {
  cache.get().delete(orgId);
}

async function read(orgId: string): Promise<OrgSharedDatasets> {
  const rows = await withTenant({ orgId }, (tx) => tx.sharedDataset.findMany({ select: { datasetId: true, specYaml: true, version: true }, orderBy: { datasetId: "asc" } }));
  return sharedDatasetsFrom(orgId, rows);
}

/** Stored rows as the parse takes them. A stored definition passed every check when it was written. */
export function sharedDatasetsFrom(orgId: string, rows: readonly { datasetId: string; specYaml: string }[]): OrgSharedDatasets {
  const byId = new Map<string, DatasetManifest>();
  for (const row of rows) {
    const parsed = parseDatasetYaml(row.specYaml);
    if (parsed.ok) byId.set(row.datasetId, parsed.value);
  }
  const stamp = `${orgId}:${createHash("sha256").update(JSON.stringify(rows.map((r) => [r.datasetId, r.specYaml]))).digest("base64url").slice(0, 16)}`;
  return { stamp, byId };
}

/*
 * The shared datasets of the organization whose work this is, for the manifest parse (lib/dashboards/manifest.ts),
 * which is synchronous: set beside the organization's own tables (lib/db/own-tables.ts withOwnTables), and by a plan
 * for the definitions it would leave.
 */
const ambient = new AsyncLocalStorage<OrgSharedDatasets>();

export function withSharedDatasets<T>(datasets: OrgSharedDatasets, work: () => Promise<T>): Promise<T> {
  return ambient.run(datasets, work);
}

export const currentSharedDatasets = (): OrgSharedDatasets | undefined => ambient.getStore();
