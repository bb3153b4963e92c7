import { describe, expect, it } from "vitest";
import { DEFAULT_INDEXING_SETTINGS, loadIndexingSettings } from "./indexing";
import { configurationProblems } from "./validate";

describe("indexing configuration", () => {
  it("defaults: 5 attempts, back-off 30 s doubling up to 30 min, 2 runs per organization, a vacuum check a minute", () => {
    expect(loadIndexingSettings({})).toEqual(DEFAULT_INDEXING_SETTINGS);
    expect(DEFAULT_INDEXING_SETTINGS).toEqual({ maxAttempts: 5, backoffBaseMs: 30_000, backoffMaxMs: 1_800_000, perOrgConcurrency: 2, vacuumCheckMs: 60_000, vacuumQuietMs: 2_000 });
  });

  it("reads each variable", () => {
    expect(
      loadIndexingSettings({
        DOCUMENT_INDEX_MAX_ATTEMPTS: "3",
        DOCUMENT_INDEX_BACKOFF_BASE_MS: "1000",
        DOCUMENT_INDEX_BACKOFF_MAX_MS: "60000",
        DOCUMENT_INDEX_PER_ORG_CONCURRENCY: "4",
        QUARRY_EMBEDDED_VACUUM_CHECK_MS: "0",
        QUARRY_EMBEDDED_VACUUM_QUIET_MS: "500",
      }),
    ).toEqual({ maxAttempts: 3, backoffBaseMs: 1000, backoffMaxMs: 60_000, perOrgConcurrency: 4, vacuumCheckMs: 0, vacuumQuietMs: 500 });
  });

  it("refuses invalid values naming the variable, and the start's check lists them", () => {
    expect(() => loadIndexingSettings({ DOCUMENT_INDEX_MAX_ATTEMPTS: "0" })).toThrow(/DOCUMENT_INDEX_MAX_ATTEMPTS: /);
    expect(() => loadIndexingSettings({ DOCUMENT_INDEX_PER_ORG_CONCURRENCY: "two" })).toThrow(/DOCUMENT_INDEX_PER_ORG_CONCURRENCY: /);
    expect(() => loadIndexingSettings({ QUARRY_EMBEDDED_VACUUM_CHECK_MS: "10" })).toThrow(/QUARRY_EMBEDDED_VACUUM_CHECK_MS: must be 0 \(off\) or 1000/);
    expect(() => loadIndexingSettings({ DOCUMENT_INDEX_BACKOFF_BASE_MS: "60000", DOCUMENT_INDEX_BACKOFF_MAX_MS: "1000" })).toThrow(/DOCUMENT_INDEX_BACKOFF_MAX_MS: must be at least/);
    expect(configurationProblems({ DOCUMENT_INDEX_MAX_ATTEMPTS: "-1" })).toEqual([expect.stringMatching(/^DOCUMENT_INDEX_MAX_ATTEMPTS: /)]);
  });
});
