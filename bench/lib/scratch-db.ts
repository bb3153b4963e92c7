// A fresh, unseeded file-backed PGlite in a temporary folder for one bench run.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { closeDb, getDb, type Database } from "@/lib/db/client";

/**
 * Points getDb() at a new temporary data folder (no demo seed, no DATABASE_URL), runs `body` with that
 * database, then closes it and deletes the folder, also when `body` throws.
 */
export async function withScratchDb<T>(name: string, body: (db: Database) => Promise<T>): Promise<T> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `quarry-bench-${name}-`));
  process.env.QUARRY_DATA_DIR = dir;
  process.env.QUARRY_SEED_DEMO = "false";
  delete process.env.DATABASE_URL;
  try {
    return await body(await getDb());
  } finally {
    await closeDb();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
