import { z } from "zod";
import { ConfigError } from "./schema";

/**
 * Index jobs (issue 28, docs/documents.md "Indexing is a job") and the embedded engine's housekeeping of the
 * chunk tables (docs/search.md "Embedded housekeeping"). Read once per process, like all configuration.
 */
export interface IndexingSettings {
  /** Attempts per index request before it is given up (state `failed`, with the reason). */
  maxAttempts: number;
  /** Back-off after failed attempt n: base × 2^(n-1), capped at backoffMaxMs. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** Index runs at a time per organization, all workers together; further jobs wait their turn. */
  perOrgConcurrency: number;
  /**
   * Embedded engine only (PGlite runs no autovacuum): how often the worker looks at the chunk tables' dead rows,
   * and vacuums them when autovacuum's own rule would (below). 0 turns the housekeeping off.
   */
  vacuumCheckMs: number;
  /** …and how long the engine must have been quiet (no statement) before a vacuum starts, so it does not land on a burst of requests. */
  vacuumQuietMs: number;
}

export const DEFAULT_INDEXING_SETTINGS: IndexingSettings = {
  maxAttempts: 5,
  backoffBaseMs: 30_000,
  backoffMaxMs: 30 * 60_000,
  perOrgConcurrency: 2,
  vacuumCheckMs: 60_000,
  vacuumQuietMs: 2_000,
};

const Env = z.object({
  DOCUMENT_INDEX_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(DEFAULT_INDEXING_SETTINGS.maxAttempts),
  DOCUMENT_INDEX_BACKOFF_BASE_MS: z.coerce.number().int().min(100).max(86_400_000).default(DEFAULT_INDEXING_SETTINGS.backoffBaseMs),
  DOCUMENT_INDEX_BACKOFF_MAX_MS: z.coerce.number().int().min(100).max(7 * 86_400_000).default(DEFAULT_INDEXING_SETTINGS.backoffMaxMs),
  DOCUMENT_INDEX_PER_ORG_CONCURRENCY: z.coerce.number().int().min(1).max(100).default(DEFAULT_INDEXING_SETTINGS.perOrgConcurrency),
  QUARRY_EMBEDDED_VACUUM_CHECK_MS: z.coerce
    .number()
    .int()
    .refine((ms) => ms === 0 || (ms >= 1_000 && ms <= 86_400_000), "must be 0 (off) or 1000 to 86400000 milliseconds")
    .default(DEFAULT_INDEXING_SETTINGS.vacuumCheckMs),
  QUARRY_EMBEDDED_VACUUM_QUIET_MS: z.coerce.number().int().min(0).max(600_000).default(DEFAULT_INDEXING_SETTINGS.vacuumQuietMs),
});

/** Parses the indexing variables; throws ConfigError naming each invalid one. */
export function loadIndexingSettings(env: Record<string, string | undefined>): IndexingSettings {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = Env.safeParse(present);
  if (!parsed.success) throw new ConfigError(`Invalid configuration:\n  ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("\n  ")}`);
  const e = parsed.data;
  if (e.DOCUMENT_INDEX_BACKOFF_MAX_MS < e.DOCUMENT_INDEX_BACKOFF_BASE_MS) {
    throw new ConfigError("Invalid configuration:\n  DOCUMENT_INDEX_BACKOFF_MAX_MS: must be at least DOCUMENT_INDEX_BACKOFF_BASE_MS");
  }
  return {
    maxAttempts: e.DOCUMENT_INDEX_MAX_ATTEMPTS,
    backoffBaseMs: e.DOCUMENT_INDEX_BACKOFF_BASE_MS,
    backoffMaxMs: e.DOCUMENT_INDEX_BACKOFF_MAX_MS,
    perOrgConcurrency: e.DOCUMENT_INDEX_PER_ORG_CONCURRENCY,
    vacuumCheckMs: e.QUARRY_EMBEDDED_VACUUM_CHECK_MS,
    vacuumQuietMs: e.QUARRY_EMBEDDED_VACUUM_QUIET_MS,
  };
}

let cached: IndexingSettings | undefined;

/** The indexing settings, read once per process (a change needs a restart). */
export function indexingSettings(): IndexingSettings {
  cached ??= loadIndexingSettings(process.env);
  return cached;
}
