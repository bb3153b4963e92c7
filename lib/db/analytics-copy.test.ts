import "@/test/embedded-analytics";
import { beforeAll, describe, expect, it } from "vitest";
import { configSingleton } from "@/lib/config";
import { getDb } from "./client";
import { withTenant } from "./tenant";

process.env.QUARRY_EMBEDDED_ANALYTICS_ENGINES = "2";
process.env.QUARRY_EMBEDDED_ANALYTICS_IDLE_MS = "1000";
configSingleton.set(undefined);

/** Burns the engine's CPU until its time limit ends it (57014). */
const RUNAWAY = "SELECT count(*) FROM generate_series(1, 1000000000)";

/** What user SQL runs as: the reader role, so the embedded analytics copy answers. */
const asReader = <T,>(sql: string, orgId = "org_acme", statementTimeoutMs?: number) =>
  withTenant({ orgId }, (tx) => tx.$queryRawUnsafe<T[]>(sql), { role: "reader", readOnly: true, statementTimeoutMs });

async function until(condition: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not true within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("the embedded analytics copy", () => {
  // The first copy of the data (and on PostgreSQL the reader login) made here, under a hook's limit,
  // not inside the first test's: on a loaded machine the copy alone can take a minute.
  beforeAll(() => asReader("SELECT 1"), 300_000);

  it("answers with rows and definitions written on the primary just before", async () => {
    const { system } = await getDb();
    expect(await asReader<{ n: number }>("SELECT count(*)::int AS n FROM locations WHERE id = 'loc_acme_copytest'")).toEqual([{ n: 0 }]);
    await system.query("INSERT INTO locations (id, org_id, code, name, city, region) VALUES ('loc_acme_copytest', 'org_acme', 'CPT', 'Copy test', 'Boston', 'East')");
    expect(await asReader<{ n: number }>("SELECT count(*)::int AS n FROM locations WHERE id = 'loc_acme_copytest'")).toEqual([{ n: 1 }]);
    await system.exec(`CREATE FUNCTION copy_test_answer() RETURNS int LANGUAGE sql AS 'SELECT 42';
      GRANT EXECUTE ON FUNCTION copy_test_answer() TO quarry_reader`);
    expect(await asReader<{ n: number }>("SELECT copy_test_answer() AS n")).toEqual([{ n: 42 }]);
  }, 120_000);

  it.skipIf(process.env.QUARRY_TEST_ENGINE === "postgres")("holds only what the reader may read: a statement that resets its role to the engine's superuser finds no user, key or document", async () => {
    const { system } = await getDb();
    const [primary] = await system.query<{ users: number; keys: number }>("SELECT (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM quarry_tenant_key)::int AS keys");
    expect(primary.users).toBeGreaterThan(0);
    // As an escaped statement would run it (past the allow-list): the role reset inside a reader transaction.
    const [copy] = await withTenant({ orgId: "org_acme" }, async (tx) => {
      await tx.$executeRawUnsafe("RESET ROLE");
      return tx.$queryRawUnsafe<{ who: string; users: number; documents: number; apiKeys: number; settings: number; orders: number }[]>(
        `SELECT current_user AS who, (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM documents)::int AS documents,
                (SELECT count(*) FROM api_keys)::int AS "apiKeys", (SELECT count(*) FROM notification_channel_configs)::int AS settings,
                (SELECT count(*) FROM orders)::int AS orders`,
      );
    }, { role: "reader", readOnly: true });
    expect(copy).toMatchObject({ users: 0, documents: 0, apiKeys: 0, settings: 0 });
    expect(copy.orders).toBeGreaterThan(0);
    // The reader's own path still works on the stripped copy: signed tenant settings, row-level security.
    expect(await asReader<{ n: number }>("SELECT count(DISTINCT org_id)::int AS n FROM orders")).toEqual([{ n: 1 }]);
  }, 120_000);

  it.skipIf(process.env.QUARRY_TEST_ENGINE === "postgres")("sizes the primary's buffers for its small reads and leaves the analytics engines PGlite's own for warehouse scans", async () => {
    const { system } = await getDb();
    const [primary] = await system.query<{ shared_buffers: string }>("SHOW shared_buffers");
    expect(primary.shared_buffers).toBe("32MB");
    expect(await asReader<{ shared_buffers: string }>("SHOW shared_buffers")).toEqual([{ shared_buffers: "128MB" }]);
  }, 120_000);

  // Engine processes exist only in embedded mode; on PostgreSQL each statement has its own backend.
  it.skipIf(process.env.QUARRY_TEST_ENGINE === "postgres")("serves another organization on a spare engine while a runaway holds the first, with the primary's latest writes, and stops the engines when idle", async () => {
    const { system, analytics } = await getDb();
    await asReader("SELECT 1");
    let runawayEnded = false;
    // A limit far past the test: the first engine stays held until the test restarts it.
    const runaway = asReader(RUNAWAY, "org_acme", 120_000).catch(() => undefined).finally(() => (runawayEnded = true));
    // Written while the first engine is busy: the spare's copy must hold it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await system.query("INSERT INTO locations (id, org_id, code, name, city, region) VALUES ('loc_globex_spare', 'org_globex', 'SPR', 'Spare test', 'Boston', 'East')");
    const rows = await asReader<{ n: number }>("SELECT count(*)::int AS n FROM locations WHERE id = 'loc_globex_spare'", "org_globex");
    expect(rows).toEqual([{ n: 1 }]);
    // Answered on the spare while the runaway still held the first engine.
    expect(runawayEnded).toBe(false);
    expect(analytics?.running).toBe(2);
    await analytics?.current?.restart("the test ends its runaway");
    await runaway;
    // Idle, every engine stops; the next reader request starts one again.
    await until(() => analytics?.running === 0, 15_000);
    expect(await asReader<{ n: number }>("SELECT count(*)::int AS n FROM locations WHERE id = 'loc_globex_spare'", "org_globex")).toEqual([{ n: 1 }]);
  }, 300_000);
});
