import os from "node:os";
import pg from "pg";

/**
 * The PostgreSQL side of the test setup (QUARRY_TEST_ENGINE=postgres): one migrated and seeded
 * template database per run, and a fresh copy of it for each test file (CREATE DATABASE …
 * TEMPLATE, far cheaper than migrating and seeding again). The copy is written through the WAL (STRATEGY WAL_LOG,
 * PostgreSQL's default): FILE_COPY's two checkpoints made each copy and drop wait on the disk, 5.2–6.3 s to create
 * and 2.0–2.9 s to drop against 2.0–2.9 s and 0.6–0.7 s at load 20 (the 26 MB template).
 */
export const TEMPLATE_DB = "quarry_test_template";
export const TEST_DB_PREFIX = "quarry_test_";

export function testServerUrl(): string {
  const url = process.env.QUARRY_TEST_DATABASE_URL;
  if (!url) throw new Error("QUARRY_TEST_ENGINE=postgres needs QUARRY_TEST_DATABASE_URL (a role with CREATEDB, a database with the vector extension)");
  return url;
}

/** The same server and credentials, another database. */
export function databaseUrl(database: string, base = testServerUrl()): string {
  const url = new URL(base);
  url.pathname = `/${database}`;
  return url.toString();
}

/** The base database named in QUARRY_TEST_DATABASE_URL: it has the vector extension, so copies of it do too. */
export function baseDatabase(base = testServerUrl()): string {
  return decodeURIComponent(new URL(base).pathname.slice(1)) || "postgres";
}

/** Runs `work` on a connection to the `postgres` maintenance database (CREATE/DROP DATABASE cannot run inside the one they name). */
export async function withMaintenance<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl("postgres") });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export async function createDatabase(name: string, template: string): Promise<void> {
  await withMaintenance(async (client) => {
    await dropWith(client, name);
    await client.query(`CREATE DATABASE ${quoteIdent(name)} TEMPLATE ${quoteIdent(template)} STRATEGY WAL_LOG`);
    await client.query(`COMMENT ON DATABASE ${quoteIdent(name)} IS ${client.escapeLiteral(creatorComment())}`);
  });
}

/** The comment a test database gets: the process that created it, which drops it when done. */
function creatorComment(): string {
  return `quarry test copy of host ${os.hostname()} pid ${process.pid}`;
}

/**
 * Whether a test database (its comment) was left behind by an interrupted run: its creator is a
 * process of this machine that has ended, or it names no creator. Another run's copies, in use on
 * the same server at the same time, are not (a run starting must not drop them under it).
 */
export function leftBehind(comment: string | null, host = os.hostname()): boolean {
  const creator = /^quarry test copy of host (\S+) pid (\d+)$/.exec(comment ?? "");
  if (!creator) return true;
  if (creator[1] !== host) return false;
  try {
    process.kill(Number(creator[2]), 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

export async function dropDatabase(name: string): Promise<void> {
  await withMaintenance((client) => dropWith(client, name));
}

/**
 * DROP … WITH (FORCE) ends the database's sessions, but on PostgreSQL 15 a non-superuser's FORCE is
 * refused (42501) while an autovacuum worker is in the database (it has no role the caller belongs to),
 * as after a test stored a few thousand chunks. A plain DROP cancels autovacuum workers itself, so
 * then: end our own sessions and drop plainly (it waits up to 5 s for them to go).
 */
async function dropWith(client: pg.Client, name: string): Promise<void> {
  try {
    await client.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
  } catch (error) {
    if ((error as { code?: string }).code !== "42501") throw error;
    await client.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND usename = current_user AND pid <> pg_backend_pid()", [name]);
    await client.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)}`);
  }
}
