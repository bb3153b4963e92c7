import "server-only";
import { currentSharedDatasetTexts, forgetSharedDatasetTexts, sharedDatasetTextsOf, withSharedDatasetTexts, type SharedDatasetTexts } from "@/lib/db/shared-datasets";
import { parseDatasetYaml } from "@/lib/manifest-check/parse";
import type { DatasetManifest } from "@/lib/manifest/schema";

/*
 * An organization's shared datasets as the manifest parse resolves `{ ref }` datasets with them
 * (lib/manifest/shared-datasets.ts): the stored texts of the organization's work (lib/db/shared-datasets.ts), parsed
 * once per set of definitions.
 */

export interface OrgSharedDatasets extends SharedDatasetTexts {
  byId: ReadonlyMap<string, DatasetManifest>;
}

const parsed = new Map<string, OrgSharedDatasets>();

function parse(texts: SharedDatasetTexts): OrgSharedDatasets {
  let hit = parsed.get(texts.stamp);
  if (!hit) {
    const byId = new Map<string, DatasetManifest>();
    for (const row of texts.rows) {
      // A stored definition passed every check when it was written.
      const result = parseDatasetYaml(row.specYaml);
      if (result.ok) byId.set(row.datasetId, result.value);
    }
    hit = { ...texts, byId };
    if (parsed.size > 200) parsed.delete(parsed.keys().next().value as string);
    parsed.set(texts.stamp, hit);
  }
  return hit;
}

/** Stored rows (or the rows a plan would leave) as the parse takes them. */
export const sharedDatasetsFrom = (orgId: string, rows: readonly { datasetId: string; specYaml: string }[]): OrgSharedDatasets => parse(sharedDatasetTextsOf(orgId, rows));

/** The shared datasets of the organization whose work this is, if any. */
export function currentSharedDatasets(): OrgSharedDatasets | undefined {
  const texts = currentSharedDatasetTexts();
  return texts && parse(texts);
}

/** Runs `work` with these definitions as the organization's (a plan's apply: what it leaves). */
export const withSharedDatasets = <T>(datasets: OrgSharedDatasets, work: () => Promise<T>): Promise<T> => withSharedDatasetTexts(datasets, work);

export const forgetSharedDatasets = forgetSharedDatasetTexts;
