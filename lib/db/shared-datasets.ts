import "server-only";
import { AsyncLocalStorage } from "node:async_hooks";
import { createHash } from "node:crypto";
import { withTenant } from "./tenant";
import { processSingleton } from "@/lib/process-singleton";

/*
 * An organization's shared dataset manifests (`kind: dataset`, migration 0050) as stored texts, for the synchronous
 * manifest parse: set beside its own tables for the organization's work (own-tables.ts withOwnTables), parsed and
 * resolved above (lib/datasets/store.ts). Cached briefly per process as own tables are: a push in this process
 * forgets the cache at once; another replica reads the new definitions within FRESH_MS.
 */

export interface SharedDatasetTexts {
  /** Differs whenever any definition does (with the organization): keys the parse's memo. */
  stamp: string;
  rows: readonly { datasetId: string; specYaml: string }[];
}

const FRESH_MS = 2_000;

const cache = processSingleton("sharedDatasetTexts", () => new Map<string, { at: number; value: Promise<SharedDatasetTexts> }>());

export function sharedDatasetTexts(orgId: string): Promise<SharedDatasetTexts> {
  const entries = cache.get();
  const hit = entries.get(orgId);
  if (hit && Date.now() - hit.at < FRESH_MS) return hit.value;
  const value = withTenant({ orgId }, (tx) => tx.sharedDataset.findMany({ select: { datasetId: true, specYaml: true }, orderBy: { datasetId: "asc" } })).then((rows) => sharedDatasetTextsOf(orgId, rows));
  entries.set(orgId, { at: Date.now(), value });
  value.catch(() => entries.delete(orgId));
  return value;
}

export function sharedDatasetTextsOf(orgId: string, rows: readonly { datasetId: string; specYaml: string }[]): SharedDatasetTexts {
  const sorted = [...rows].sort((a, b) => a.datasetId.localeCompare(b.datasetId));
  const stamp = `${orgId}:${createHash("sha256").update(JSON.stringify(sorted.map((r) => [r.datasetId, r.specYaml]))).digest("base64url").slice(0, 16)}`;
  return { stamp, rows: sorted };
}

/** After a push: the next parse reads the definitions again. */
export function forgetSharedDatasetTexts(orgId: string): void {
  cache.get().delete(orgId);
}

const ambient = new AsyncLocalStorage<SharedDatasetTexts>();

export const withSharedDatasetTexts = <T>(texts: SharedDatasetTexts, work: () => Promise<T>): Promise<T> => ambient.run(texts, work);

/** The shared datasets of the organization whose work this is, if any. */
export const currentSharedDatasetTexts = (): SharedDatasetTexts | undefined => ambient.getStore();
