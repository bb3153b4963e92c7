import { describe, expect, it } from "vitest";
import { config } from "@/lib/config";
import { getDb } from "./client";
import { analyzeIfStale, analyzeNow } from "./statistics";

const onPostgres = process.env.QUARRY_TEST_ENGINE === "postgres";

describe.skipIf(onPostgres)("planner statistics on the embedded engine", () => {
  it("are gathered only when enough was written since the last ANALYZE, and then remembered", async () => {
    const opened = new Date();
    const { system } = await getDb();
    const database = config().database;
    if (database.kind !== "pglite") throw new Error("embedded engine expected");
    // This file's copy of the seeded template carries the seed's statistics and their WAL position: opening it gathered nothing.
    const analyzedSince = async (since: Date) => Number((await system.query<{ n: string }>("SELECT count(*)::text AS n FROM pg_stat_user_tables WHERE last_analyze >= $1", [since]))[0].n);
    expect(await analyzedSince(opened)).toBe(0);
    expect(await analyzeIfStale(system, database.dir)).toBe(false);

    await system.exec("CREATE TABLE statistics_probe AS SELECT g AS id, md5(g::text) AS label FROM generate_series(1, 2000) g");
    // Under the threshold: still current. Past a threshold this write exceeds: gathered, and current again right after.
    expect(await analyzeIfStale(system, database.dir)).toBe(false);
    expect(await analyzeIfStale(system, database.dir, 1_000)).toBe(true);
    const [{ reltuples }] = await system.query<{ reltuples: number }>("SELECT reltuples FROM pg_class WHERE relname = 'statistics_probe'");
    expect(Number(reltuples)).toBe(2000);
    expect(await analyzeIfStale(system, database.dir, 1_000)).toBe(false);
    expect(await analyzedSince(opened)).toBeGreaterThan(0);

    // A marker that is not a WAL position (a damaged file) counts as never gathered.
    const fs = await import("node:fs");
    const path = await import("node:path");
    fs.writeFileSync(path.join(database.dir, "quarry-analyzed-lsn"), "garbage");
    expect(await analyzeIfStale(system, database.dir)).toBe(true);
    await analyzeNow(system, database.dir);
    expect(await analyzeIfStale(system, database.dir)).toBe(false);
  });
});
