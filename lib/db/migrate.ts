import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { SqlRunner } from "./sql";

export const MIGRATIONS_DIR = path.join(/*turbopackIgnore: true*/ process.cwd(), "prisma", "migrations");

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

/** Migrations in Prisma's folder layout (`<n>_<name>/migration.sql`), in name order. */
export function listMigrations(dir = MIGRATIONS_DIR): Migration[] {
  // Read at run time from the project folder (turbopackIgnore: not traced into the bundle).
  return fs
    .readdirSync(/*turbopackIgnore: true*/ dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && fs.existsSync(/*turbopackIgnore: true*/ path.join(dir, entry.name, "migration.sql")))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = fs.readFileSync(/*turbopackIgnore: true*/ path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: crypto.createHash("sha256").update(sql).digest("hex") };
    });
}

/** Advisory lock key of migrations and start-up work (lib/db/startup-lock.ts uses the same one). */
const MIGRATION_LOCK_KEY = "7311505216001";

/**
 * Applies every migration not yet recorded, each in its own transaction.
 * An applied migration whose file changed is an error, not a silent skip.
 * `db` must be one session (a dedicated connection, not a pool): the advisory
 * lock that makes concurrent migrators take turns is held by that session.
 */
export async function migrate(db: SqlRunner, migrations = listMigrations()): Promise<string[]> {
  await db.query("SELECT pg_advisory_lock($1::bigint)", [MIGRATION_LOCK_KEY]);
  try {
    return await applyPending(db, migrations);
  } finally {
    await db.query("SELECT pg_advisory_unlock($1::bigint)", [MIGRATION_LOCK_KEY]);
  }
}

async function applyPending(db: SqlRunner, migrations: Migration[]): Promise<string[]> {
  await db.exec(`CREATE TABLE IF NOT EXISTS _quarry_migrations (
    name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
  const applied = new Map(
    (await db.query<{ name: string; checksum: string }>("SELECT name, checksum FROM _quarry_migrations")).map((r) => [r.name, r.checksum]),
  );
  const done: string[] = [];
  for (const migration of migrations) {
    const known = applied.get(migration.name);
    if (known !== undefined) {
      if (known !== migration.checksum) {
        throw new Error(`Migration ${migration.name} was changed after it was applied; add a new migration instead.`);
      }
      continue;
    }
    await db.exec("BEGIN");
    try {
      await db.exec(migration.sql);
      await db.query("INSERT INTO _quarry_migrations (name, checksum) VALUES ($1, $2)", [migration.name, migration.checksum]);
      await db.exec("COMMIT");
    } catch (error) {
      await db.exec("ROLLBACK");
      throw new Error(`Migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
    }
    done.push(migration.name);
  }
  return done;
}
