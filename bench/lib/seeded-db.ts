// The demo warehouse on either engine for one bench run: a temporary, seeded PGlite folder, or a
// `quarry_bench` database on the PostgreSQL server of QUARRY_TEST_DATABASE_URL (created from its
// base database, which has the vector extension; migrated, seeded and analysed once, then reused).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { configSingleton } from "@/lib/config";
import { closeDb, getDb, type Database } from "@/lib/db/client";
import { migrate } from "@/lib/db/migrate";
import { seedDemo } from "@/lib/demo/seed";
import { benchPostgresUrl } from "./scratch-db";

const BENCH_DB = "quarry_bench";

export async function withSeededDb<T>(engine: "pglite" | "postgres", body: (db: Database) => Promise<T>): Promise<T> {
  configSingleton.set(undefined);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "quarry-bench-seeded-"));
  process.env.QUARRY_DATA_DIR = dir;
  process.env.QUARRY_SEED_DEMO = "true";
  process.env.QUARRY_LOG_LEVEL ??= "warn";
  if (engine === "postgres") process.env.DATABASE_URL = await benchDatabase();
  else delete process.env.DATABASE_URL;
  try {
    const db = await getDb(); // the embedded engine migrates on open
    // and is seeded as `npm run db:seed` seeds it (with ANALYZE): it no longer seeds itself on open (issue 33).
    if (engine === "pglite") await seedDemo(db.system);
    return await body(db);
  } finally {
    await closeDb();
    configSingleton.set(undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function benchDatabase(): Promise<string> {
  const server = benchPostgresUrl();
  if (!server) throw new Error("PostgreSQL benches need QUARRY_TEST_DATABASE_URL");
  const maintenance = new URL(server);
  maintenance.pathname = "/postgres";
  const admin = new pg.Client({ connectionString: maintenance.toString() });
  await admin.connect();
  try {
    const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [BENCH_DB]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${BENCH_DB} TEMPLATE "${decodeURIComponent(new URL(server).pathname.slice(1))}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(server);
  url.pathname = `/${BENCH_DB}`;
  const session = new pg.Client({ connectionString: url.toString() });
  await session.connect();
  try {
    const runner = { exec: async (sql: string) => void (await session.query(sql)), query: async (sql: string, params?: unknown[]) => (await session.query(sql, params)).rows };
    await migrate(runner);
    await seedDemo(runner);
    await session.query("ANALYZE");
  } finally {
    await session.end();
  }
  return url.toString();
}
