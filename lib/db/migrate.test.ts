import crypto from "node:crypto";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "./client";
import { listMigrations, migrate, type Migration } from "./migrate";
import type { SqlRunner } from "./sql";

// The test file's copy of the migrated template: every migration of the folder is applied.
let client: pg.PoolClient;
let session: SqlRunner;
beforeAll(async () => {
  client = await (await getDb()).pool.connect();
  // One session, as migrate asks (BEGIN and COMMIT on one connection).
  session = {
    exec: async (sql) => void (await client.query(sql)),
    query: async <T,>(sql: string, params?: unknown[]) => (await client.query(sql, params)).rows as T[],
  };
});
afterAll(() => client.release());

const migration = (name: string, sql: string): Migration => ({ name, sql, checksum: crypto.createHash("sha256").update(sql).digest("hex") });

describe("migrate", () => {
  it("applies nothing to an up-to-date database", async () => {
    expect(await migrate(session)).toEqual([]);
  });

  it("refuses a migration changed after it was applied, up to date or not", async () => {
    const migrations = listMigrations();
    const last = migrations.at(-1)!;
    const changed = [...migrations.slice(0, -1), migration(last.name, `${last.sql}\n-- edited`)];
    await expect(migrate(session, changed)).rejects.toThrow(`Migration ${last.name} was changed after it was applied`);
    await expect(migrate(session, [...changed, migration("9999_not_yet", "SELECT 1")])).rejects.toThrow(`Migration ${last.name} was changed after it was applied`);
    expect(await session.query("SELECT 1 FROM _quarry_migrations WHERE name = '9999_not_yet'")).toEqual([]);
  });

  it("applies a new migration once, after the applied ones", async () => {
    const added = migration("9999_migrate_test", "CREATE TABLE migrate_test_probe (id int)");
    expect(await migrate(session, [...listMigrations(), added])).toEqual([added.name]);
    expect(await session.query("SELECT count(*)::int AS n FROM migrate_test_probe")).toEqual([{ n: 0 }]);
    expect(await migrate(session, [...listMigrations(), added])).toEqual([]);
  });
});
