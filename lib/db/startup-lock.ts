import "server-only";
import pg from "pg";
import { config } from "@/lib/config";
import { log } from "@/lib/log";
import { getDb } from "./client";
import type { SqlRunner } from "./sql";

/**
 * One key for all start-up work (migrations, demo seeding): replicas starting together take turns,
 * and each finds the work of the one before it done. Advisory locks are re-entrant within a
 * session, so migrate() taking the same key on the lock's own session does not deadlock.
 */
export const STARTUP_LOCK_KEY = "7311505216001";

/**
 * Runs `work` holding the start-up advisory lock. On a PostgreSQL server the lock is held by a
 * dedicated connection (a session lock: PostgreSQL releases it if this process dies mid-way), and
 * `work` receives that session for statements that must run on it (migrations). The embedded
 * engine belongs to this one process, so there it only serializes callers within the process.
 */
export async function withStartupLock<T>(work: (session: SqlRunner) => Promise<T>): Promise<T> {
  const cfg = config();
  if (cfg.database.kind !== "postgres") {
    const { system } = await getDb();
    const previous = embeddedQueue;
    let release!: () => void;
    embeddedQueue = new Promise<void>((resolve) => (release = resolve));
    await previous;
    try {
      return await work(system);
    } finally {
      release();
    }
  }
  const client = new pg.Client({ connectionString: cfg.database.url, application_name: "quarry start-up" });
  // Losing the session while `work` runs elsewhere must fail start-up through `work`, not crash the process here.
  client.on("error", (error) => log.warn("start-up lock session lost", { error: error.message }));
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1::bigint)", [STARTUP_LOCK_KEY]);
    return await work({
      exec: async (sql) => void (await client.query(sql)),
      query: async (sql, params) => (await client.query(sql, params as unknown[])).rows,
    });
  } finally {
    // Ending the session releases the lock, also when the unlock itself fails.
    await client.end().catch(() => undefined);
  }
}

let embeddedQueue: Promise<void> = Promise.resolve();
