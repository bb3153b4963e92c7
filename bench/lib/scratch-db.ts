// A fresh, unseeded database for one bench run: a file-backed PGlite in a temporary folder, or the
// PostgreSQL server named by QUARRY_TEST_DATABASE_URL (or DATABASE_URL) when the run asks for it.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { configSingleton } from "@/lib/config";
import { closeDb, getDb, type Database } from "@/lib/db/client";
import { migrate } from "@/lib/db/migrate";

/** The PostgreSQL server benches may use, if any. */
export function benchPostgresUrl(): string | undefined {
  return process.env.QUARRY_TEST_DATABASE_URL || process.env.DATABASE_URL || undefined;
}

/** `--engine pglite|postgres|both` (default: pglite, and postgres too when a URL is set). */
export function benchEngines(args: string[]): ("pglite" | "postgres")[] {
  const at = args.indexOf("--engine");
  const asked = at >= 0 ? args[at + 1] : undefined;
  if (asked === "pglite") return ["pglite"];
  if (asked === "postgres") {
    if (!benchPostgresUrl()) throw new Error("--engine postgres needs QUARRY_TEST_DATABASE_URL or DATABASE_URL");
    return ["postgres"];
  }
  return benchPostgresUrl() ? ["pglite", "postgres"] : ["pglite"];
}

/** Removes `--flag value` pairs so positional arguments stay where they were. */
export function positional(args: string[], flags: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (flags.includes(args[i])) i++;
    else if (!args[i].startsWith("--")) out.push(args[i]);
  }
  return out;
}

/**
 * Points getDb() at a new temporary PGlite data folder (no demo seed), or at the PostgreSQL server
 * (migrated; the bench is responsible for removing what it wrote there), runs `body` with that
 * database, then closes it (and deletes the folder), also when `body` throws.
 */
export async function withScratchDb<T>(name: string, body: (db: Database) => Promise<T>, engine: "pglite" | "postgres" = "pglite"): Promise<T> {
  configSingleton.set(undefined);
  process.env.QUARRY_SEED_DEMO = "false";
  // Also on PostgreSQL: stored files (local object storage) go to the temporary folder.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `quarry-bench-${name}-`));
  process.env.QUARRY_DATA_DIR = dir;
  if (engine === "postgres") process.env.DATABASE_URL = benchPostgresUrl();
  else delete process.env.DATABASE_URL;
  try {
    const db = await getDb();
    if (db.kind === "postgres") await migrate(db.system);
    return await body(db);
  } finally {
    await closeDb();
    configSingleton.set(undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
