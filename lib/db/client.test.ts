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

    // Each idle connection reports its own end; a query taken before the last report could land on a dead one.
    let ended = 0;
    const lost = new Promise<void>((resolve) => {
      const onError = () => {
        ended += 1;
        if (ended < pids.length) return;
        pool.off("error", onError);
        resolve();
      };
      pool.on("error", onError);
    });
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

describe.skipIf(onPostgres)("the embedded engine", () => {
  it("lets a new connection prepare a statement under a name its session already had from the previous one", async () => {
    const { pool } = await getDb();
    const statement = { name: "quarry_client_test", text: "SELECT $1::int + 1 AS n", values: [41] };
    const first = await pool.connect();
    expect((await first.query<{ n: number }>(statement)).rows[0].n).toBe(42);
    // Released with an error: the pool ends this connection and opens another to the same session.
    first.release(new Error("dropped by the test"));
    const second = await pool.connect();
    try {
      expect(second).not.toBe(first);
      expect((await second.query<{ n: number }>(statement)).rows[0].n).toBe(42);
    } finally {
      second.release();
    }
  });

  it("leaves nothing of a connection dropped inside a transaction to the next connection", async () => {
    const { pool } = await getDb();
    const first = await pool.connect();
    await first.query("BEGIN");
    await first.query("SELECT set_config('quarry.left_open', 'yes', true)");
    first.release(new Error("dropped by the test"));
    const second = await pool.connect();
    try {
      // Whichever runs first, the old connection's close or the new one's start, rolls the transaction back.
      const { rows } = await second.query<{ v: string }>("SELECT coalesce(current_setting('quarry.left_open', true), '') AS v");
      expect(rows[0].v).toBe("");
    } finally {
      second.release();
    }
  });

  it("builds an HNSW index over loaded rows in its own memory, not in a parallel build's shared segment", async () => {
    const { pool } = await getDb();
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      // A plain table: no build of a temporary one is ever parallel. Rolled back below.
      await client.query("CREATE TABLE hnsw_build (v vector(3))");
      await client.query("INSERT INTO hnsw_build SELECT ARRAY[g, g % 7, g % 13]::vector FROM generate_series(1, 200) g");
      // Even a small table is worth parallel workers at this scan size; a parallel HNSW build asks for a
      // shared segment of the whole maintenance_work_mem, which the engine cannot map (engine-process.mjs).
      await client.query("SET LOCAL min_parallel_table_scan_size = 0");
      await client.query("SET LOCAL maintenance_work_mem = '2000MB'");
      await client.query("CREATE INDEX ON hnsw_build USING hnsw (v vector_l2_ops)");
      const { rows } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM (SELECT v FROM hnsw_build ORDER BY v <-> '[1,1,1]' LIMIT 5) nearest");
      expect(rows[0].n).toBe(5);
    } finally {
      await client.query("ROLLBACK");
      client.release();
    }
  });
});
