import crypto from "node:crypto";
import { type ValidationItem } from "@/lib/errors";
import { manifestValidationItems } from "@/lib/manifest/errors";
import { parseDashboardYaml, type ParsedDashboard } from "@/lib/manifest/parse";

/** A manifest that passed validation: the dashboard, its widgets in order and by id, its datasets. */
export type ValidManifest = ParsedDashboard;

export type ManifestResult = { ok: true; value: ValidManifest } | { ok: false; errors: ValidationItem[] };

/** Parses and validates spec_yaml; errors become 422 items with the YAML position. */
export function parseManifest(specYaml: string): ManifestResult {
  const result = parseDashboardYaml(specYaml);
  return result.ok ? { ok: true, value: result.dashboard } : { ok: false, errors: manifestValidationItems(result.errors) };
}

const cache = new Map<string, ManifestResult>();

/** parseManifest memoized by content: stored manifests are parsed once per process, not per request. */
export function parseManifestCached(specYaml: string): ManifestResult {
  const key = crypto.createHash("sha256").update(specYaml).digest("base64url");
  let hit = cache.get(key);
  if (!hit) {
    hit = parseManifest(specYaml);
    if (cache.size > 500) cache.delete(cache.keys().next().value as string);
    cache.set(key, hit);
  }
  return hit;
}
