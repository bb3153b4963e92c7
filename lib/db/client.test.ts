import pg from "pg";
import { describe, expect, it } from "vitest";
import { getDb } from "./client";

const onPostgres = process.env.QUARRY_TEST_ENGINE === "postgres";

// The embedded engine's connections live and die with the engine process (its supervisor's tests cover that).
describe.skipIf(!onPostgres)("the PostgreSQL pool", () => {
  it("survives the server ending its idle connections (restart, failover, pg_terminate_backend) and carries on", async () => {
    const db = await getDb();
    const { pool } = db;
    // Several idle connections, each with its backend pid.
    const clients = await Promise.all([0, 1, 2].map(() => pool.connect()));
    const pids = await Promise.all(clients.map(async (c) => (await c.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0].pid));
    for (const c of clients) c.release();
    expect(pool.idleCount).toBeGreaterThanOrEqual(3);

    const lost = new Promise<void>((resolve) => pool.once("error", () => resolve()));
    const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await admin.connect();
    try {
      await admin.query("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", [pids]);
    } finally {
      await admin.end();
    }
    // Without the pool's handler this event would be an uncaught exception and end the process.
    await lost;
    const [{ one }] = await db.system.query<{ one: number }>("SELECT 1 AS one");
    expect(one).toBe(1);
    expect(await db.prisma.organization.count()).toBeGreaterThan(0);
  });
});
