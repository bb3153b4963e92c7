import "server-only";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { config } from "@/lib/config";
import { log } from "@/lib/log";
import { processSingleton } from "@/lib/process-singleton";
import { PrismaClient } from "./generated/client";
import { AnalyticsCopy, type ReaderLease } from "./analytics-copy";
import { lockDataDir } from "./data-dir-lock.mjs";
import { EmbeddedEngine } from "./embedded-engine";
import { migrate } from "./migrate";
import { analyzeIfStale } from "./statistics";
import { UserSqlLogins } from "./user-sql-logins";
import type { SqlRunner } from "./sql";

/** An organization's user SQL pool closes after this long without reader work (lib/db/user-sql-logins.ts). */
const USER_SQL_POOL_IDLE_MS = 60_000;

/** The primary engine's shared_buffers when analytics engines answer dashboards' SQL. */
const PRIMARY_SHARED_BUFFERS_MB = 32;

export type { PrismaClient };

/**
 * Time limit for embedded statements that set none (service work, migrations, ANALYZE): generous,
 * as the engine is restarted when it passes. User SQL sets its own through withTenant.
 */
const EMBEDDED_DEFAULT_LIMIT_MS = 120_000;

export interface Database {
  kind: "pglite" | "postgres";
  prisma: PrismaClient;
  /** Owner-level access for migrations, seeding and identity look-ups; tenant data goes through withTenant. */
  system: SqlRunner;
  /**
   * The connection pool, for bulk paths (lib/db/bulk.ts). Embedded: the engine's pool of one
   * connection (hold it only briefly).
   */
  pool: pg.Pool;
  /**
   * The client for `quarry_reader` work (user SQL, datasets, rule evaluation), held for one
   * transaction. Embedded: one of the analytics engines on copies of the data, so a runaway user
   * query blocks neither the app nor other organizations (docs/embedded-engine.md). PostgreSQL: the
   * organization's own login, a member of quarry_reader alone (provisioned: lib/db/reader-login.ts),
   * or the operator's QUARRY_READER_DATABASE_URL shared by all; it throws ReaderLoginUnavailable
   * when there is none. Undefined: use `prisma`.
   */
  readerLease?: (orgId: string) => Promise<ReaderLease>;
  /** PostgreSQL: why user-written SQL cannot run (no safe reader login), or null when it can. */
  userSqlProblem?: () => Promise<string | null>;
  /** PostgreSQL: whether user SQL runs on a login per organization or on the operator's one shared login. */
  userSqlLogins?: "per_organization" | "shared";
  /** The supervisor of the embedded engine process; undefined on a PostgreSQL server. */
  engine?: EmbeddedEngine;
  /** The embedded read-only copy for analytics; undefined on a PostgreSQL server. */
  analytics?: AnalyticsCopy;
  close(): Promise<void>;
}

/** The process-wide database, opened (and in embedded mode migrated) on first use; a failed start is retried by the next caller. */
const databaseSingleton = processSingleton("database", openDatabase);

export const getDb = (): Promise<Database> => databaseSingleton.get();

/** Closes the process-wide database (tests, CLI scripts). */
export async function closeDb(): Promise<void> {
  const pending = databaseSingleton.peek();
  databaseSingleton.set(undefined);
  if (pending) await (await pending).close();
}

async function openDatabase(): Promise<Database> {
  const cfg = config();
  if (cfg.database.kind === "postgres") {
    const pool = openPool(cfg.database.url, cfg.database.poolSize);
    const system = poolRunner(pool);
    const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
    // User SQL on its organization's own login that can become nothing but quarry_reader (never the
    // app's login, whose BYPASSRLS a role reset would reach), opened on first use.
    const userSqlLogins = new UserSqlLogins(
      {
        system,
        databaseUrl: cfg.database.url,
        readerUrl: cfg.database.readerUrl,
        total: cfg.userSql.total,
        // A few: an organization's user SQL (cfg.userSql.perKey at once) beside its own reader work (rules, datasets).
        // The operator's one shared login serves every organization's slots from its one pool.
        perOrganization: cfg.database.readerUrl ? cfg.userSql.total : Math.min(cfg.userSql.total, Math.max(2, cfg.userSql.perKey)),
        idleMs: USER_SQL_POOL_IDLE_MS,
      },
      (readerPool) => new PrismaClient({ adapter: new PrismaPg(readerPool) }),
    );
    return {
      kind: "postgres",
      prisma,
      readerLease: async (orgId) => {
        const lease = await userSqlLogins.lease(orgId);
        return { prisma: lease.client, release: lease.release };
      },
      userSqlProblem: () => userSqlLogins.problem(),
      userSqlLogins: userSqlLogins.shared ? "shared" : "per_organization",
      system,
      pool,
      close: async () => {
        await prisma.$disconnect();
        await pool.end();
        await userSqlLogins.close();
      },
    };
  }

  // One process per data folder: a second one refuses to start, naming the holder (lib/db/data-dir-lock.mjs).
  const lock = await lockDataDir(cfg.dataDir);
  const analytics = cfg.database.analyticsCopy ? new AnalyticsCopy(cfg.database.dir, { engines: cfg.database.analyticsEngines, idleMs: cfg.database.analyticsIdleMs }) : undefined;
  const engine = new EmbeddedEngine({
    dataDir: cfg.database.dir,
    defaultLimitMs: EMBEDDED_DEFAULT_LIMIT_MS,
    onStatement: (text) => analytics?.noteStatement(text),
    onReaderTablesChanged: (table) => analytics?.noteReaderTablesChanged(table),
    // With analytics engines beside it the primary serves small reads and writes (sessions, jobs,
    // documents), not warehouse scans: a quarter of PGlite's 128 MB of buffers, which a page held
    // once would keep in the always-running process for good (bench/embedded-memory.ts).
    sharedBuffersMb: analytics ? PRIMARY_SHARED_BUFFERS_MB : undefined,
  });
  try {
    await engine.start();
    const system = poolRunner(engine.pool);
    await migrate(system);
    // PGlite runs no autovacuum daemon: statistics are gathered here when enough was written since the last time.
    await analyzeIfStale(system, cfg.database.dir);
    const prisma = new PrismaClient({ adapter: new PrismaPg(engine.pool) });
    return {
      kind: "pglite",
      prisma,
      readerLease: analytics ? () => analytics.lease(engine) : undefined,
      system,
      engine,
      analytics,
      pool: engine.pool,
      close: async () => {
        await prisma.$disconnect();
        await analytics?.close();
        await engine.close();
        lock.release();
      },
    };
  } catch (error) {
    await analytics?.close();
    await engine.close();
    lock.release();
    throw error;
  }
}

function openPool(connectionString: string, max: number): pg.Pool {
  const pool = new pg.Pool({ connectionString, max });
  // An idle connection the server closed (restart, failover, an operator's pg_terminate_backend) is an
  // 'error' event; unhandled it would end the process. The pool drops that connection and opens another.
  pool.on("error", (error) => log.warn("idle database connection lost", { error: error.message }));
  return pool;
}

function poolRunner(pool: pg.Pool): SqlRunner {
  return {
    exec: async (sql) => void (await pool.query(sql)),
    query: async <T,>(sql: string, params?: unknown[]) => (await pool.query(sql, params)).rows as T[],
  };
}
