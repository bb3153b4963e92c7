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
 * Concurrent migrators (replicas starting together, `npm run db:migrate`
 * during a start) take turns: each transaction first takes a transaction-level
 * advisory lock, then looks again at what is applied. `db` should be one
 * session (a dedicated connection): on a pool, BEGIN and COMMIT may reach
 * different connections.
 */
export async function migrate(db: SqlRunner, migrations = listMigrations()): Promise<string[]> {
  // Every start of an up-to-date database: one read instead of a locked transaction per migration (those took
  // 3.4-4.5 s of each embedded start at load 23, paid by every test file).
  if (await allApplied(db, migrations)) return [];
  await inLockedTransaction(db, () =>
    db.exec(`CREATE TABLE IF NOT EXISTS _quarry_migrations (
      name text PRIMARY KEY, checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`),
  );
  const done: string[] = [];
  for (const migration of migrations) {
    const applied = await inLockedTransaction(db, async () => {
      const [known] = await db.query<{ checksum: string }>("SELECT checksum FROM _quarry_migrations WHERE name = $1", [migration.name]);
      if (known) {
        if (known.checksum !== migration.checksum) {
          throw changedAfterApplied(migration);
        }
        return false;
      }
      try {
        await db.exec(migration.sql);
      } catch (error) {
        throw new Error(`Migration ${migration.name} failed: ${(error as Error).message}`, { cause: error });
      }
      await db.query("INSERT INTO _quarry_migrations (name, checksum) VALUES ($1, $2)", [migration.name, migration.checksum]);
      return true;
    });
    if (applied) done.push(migration.name);
  }
  return done;
}

/** Whether every migration is recorded with its checksum; a changed one is the same error as in migrate's loop. */
async function allApplied(db: SqlRunner, migrations: Migration[]): Promise<boolean> {
  const [table] = await db.query<{ found: boolean }>("SELECT to_regclass('_quarry_migrations') IS NOT NULL AS found");
  if (!table.found) return false;
  const applied = new Map((await db.query<{ name: string; checksum: string }>("SELECT name, checksum FROM _quarry_migrations")).map((m) => [m.name, m.checksum]));
  for (const migration of migrations) {
    const known = applied.get(migration.name);
    if (known === undefined) return false;
    if (known !== migration.checksum) throw changedAfterApplied(migration);
  }
  return true;
}

const changedAfterApplied = (migration: Migration) => new Error(`Migration ${migration.name} was changed after it was applied; add a new migration instead.`);

async function inLockedTransaction<T>(db: SqlRunner, work: () => Promise<T>): Promise<T> {
  await db.exec("BEGIN");
  try {
    await db.query("SELECT pg_advisory_xact_lock($1::bigint)", [MIGRATION_LOCK_KEY]);
    const result = await work();
    await db.exec("COMMIT");
    return result;
  } catch (error) {
    await db.exec("ROLLBACK");
    throw error;
  }
}
