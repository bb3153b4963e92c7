import "server-only";
import fs from "node:fs";
import { PGlite } from "@electric-sql/pglite";
import { vector } from "@electric-sql/pglite/vector";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { config } from "@/lib/config";
import { PrismaClient } from "./generated/client";
import { migrate } from "./migrate";
import { seedDemo } from "./seed";
import type { SqlRunner } from "./sql";

export type { PrismaClient };

export interface Database {
  kind: "pglite" | "postgres";
  prisma: PrismaClient;
  /** Owner-level access for migrations, seeding and identity look-ups; tenant data goes through withTenant. */
  system: SqlRunner;
  /** The embedded engine itself, for bulk paths (COPY); undefined on a PostgreSQL server. */
  pglite?: PGlite;
  /** The server's connection pool, for bulk paths (COPY FROM STDIN); undefined for the in-process PGlite. */
  pool?: pg.Pool;
  close(): Promise<void>;
}

const holder = globalThis as unknown as { __quarryDb?: Promise<Database> };

/** The process-wide database, opened (and in embedded mode migrated and seeded) on first use. */
export function getDb(): Promise<Database> {
  if (!holder.__quarryDb) {
    // A failed start must not stay cached: the next caller tries again.
    holder.__quarryDb = openDatabase().catch((error: unknown) => {
      holder.__quarryDb = undefined;
      throw error;
    });
  }
  return holder.__quarryDb;
}

/** Closes the process-wide database (tests, CLI scripts). */
export async function closeDb(): Promise<void> {
  const pending = holder.__quarryDb;
  holder.__quarryDb = undefined;
  if (pending) await (await pending).close();
}

async function openDatabase(): Promise<Database> {
  const cfg = config();
  if (cfg.database.kind === "postgres") {
    const pool = new pg.Pool({ connectionString: cfg.database.url });
    const system: SqlRunner = {
      exec: async (sql) => void (await pool.query(sql)),
      query: async (sql, params) => (await pool.query(sql, params as unknown[])).rows,
    };
    const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
    return { kind: "postgres", prisma, system, pool, close: async () => { await prisma.$disconnect(); await pool.end(); } };
  }

  // PGlite does not create missing parent folders.
  fs.mkdirSync(cfg.database.dir, { recursive: true });
  const pglite = await PGlite.create({ dataDir: cfg.database.dir, extensions: { vector } });
  const system: SqlRunner = {
    exec: async (sql) => void (await pglite.exec(sql)),
    query: async <T,>(sql: string, params?: unknown[]) => (await pglite.query<T>(sql, params)).rows,
  };
  await migrate(system);
  if (cfg.seedDemo) await seedDemo(system);
  // PGlite runs no autovacuum daemon, so nothing else gathers planner statistics: without them the
  // warehouse plans as if its tables were tiny (the sample dashboard's widest queries ran 4x slower).
  await system.exec("ANALYZE");
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(pglite) });
  return {
    kind: "pglite",
    prisma,
    system,
    pglite,
    close: async () => { await prisma.$disconnect(); await pglite.close(); },
  };
}
