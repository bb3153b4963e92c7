import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configSingleton } from "@/lib/config";
import { closeDb, getDb } from "./client";
import { ForgetfulPool } from "./forgetful-pool";
import { withTenant } from "./tenant";

/*
 * Connections that forget (issue 41 §3): what one reader lease leaves in its session — run as raw
 * statements through the tenant helper, as a statement that got past every check would — is gone
 * in the next lease on the same connection. One connection per pool (the PostgreSQL organization
 * pool sized 1; each embedded engine has one), so the next lease is forced onto it.
 */
const onServer = process.env.QUARRY_TEST_ENGINE === "postgres";

/** What the next lease reads of its session. */
const PROBE = `SELECT pg_backend_pid() AS pid,
  current_setting('search_path') AS search_path,
  coalesce(current_setting('app.leaked', true), '') AS app_leaked,
  current_setting('work_mem') AS work_mem,
  (SELECT count(*)::int FROM pg_prepared_statements) AS prepared,
  (SELECT count(*)::int FROM pg_cursors) AS cursors,
  (SELECT count(*)::int FROM pg_listening_channels()) AS listening,
  (SELECT count(*)::int FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()) AS advisory_locks`;
type Session = { pid: number; search_path: string; app_leaked: string; work_mem: string; prepared: number; cursors: number; listening: number; advisory_locks: number };

/** Each attempt and the part of the session it changes when it is allowed to run. */
const ATTEMPTS: [statement: string, changes: Partial<Session>][] = [
  ["SELECT set_config('search_path', 'pg_catalog', false)", { search_path: "pg_catalog" }],
  ["SET SESSION search_path = pg_catalog", { search_path: "pg_catalog" }],
  ["SELECT set_config('app.leaked', 'yes', false)", { app_leaked: "yes" }],
  ["SET SESSION app.leaked = 'yes'", { app_leaked: "yes" }],
  ["SET SESSION work_mem = '77kB'", { work_mem: "77kB" }],
  ["SELECT pg_advisory_lock(4141)", { advisory_locks: 1 }],
  ["PREPARE leaked_statement AS SELECT 1", { prepared: 1 }],
  ["DECLARE leaked_cursor CURSOR WITH HOLD FOR SELECT 1", { cursors: 1 }],
  // A LISTEN shows in pg_listening_channels() only once committed: the next lease is where it would.
  ["LISTEN leaked_channel", {}],
];

const lease = <T,>(work: (run: <R>(sql: string) => Promise<R[]>) => Promise<T>) =>
  withTenant({ orgId: "org_acme" }, (tx) => work((sql) => tx.$queryRawUnsafe(sql)), { role: "reader", userSql: true, readOnly: true });
const probe = () => lease(async (run) => (await run<Session>(PROBE))[0]);

/** Runs the attempt in a lease of its own; what it changed, read in that lease, or "refused". */
async function attempt(statement: string): Promise<Session | "refused"> {
  return lease(async (run) => {
    await run(statement);
    return (await run<Session>(PROBE))[0];
  }).catch(() => "refused" as const);
}

function forgets(engine: string) {
  describe(`on ${engine}`, () => {
    let clean: Session;
    beforeAll(async () => {
      clean = await probe();
    }, 300_000);
    afterAll(() => closeDb());

    it.each(ATTEMPTS)("%s in one lease is gone in the next, on the same connection", async (statement, changes) => {
      const during = await attempt(statement);
      if (during !== "refused") expect(during).toMatchObject(changes);
      const after = await probe();
      expect(after).toEqual(clean);
      const { system } = await getDb();
      const [held] = await system.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = 4141");
      expect(held.n).toBe(0);
    });

    it("the session-level SETs took effect where they ran (the test is not vacuous)", async () => {
      expect(await attempt("SET SESSION search_path = pg_catalog")).toMatchObject({ search_path: "pg_catalog" });
      expect(await attempt("SET SESSION app.leaked = 'yes'")).toMatchObject({ app_leaked: "yes" });
      expect(await probe()).toEqual(clean);
    });

    // The embedded engines' pools are the database's own; an organization's pool on a server is inside its registry (user-sql-logins.ts).
    it.skipIf(onServer)("one reset per reader lease, none failed", async () => {
      const { pool, engine, analytics } = await getDb();
      const pools = [...new Set([pool, engine?.pool, analytics?.current?.pool])].filter((p): p is ForgetfulPool => p instanceof ForgetfulPool);
      const resets = async () => {
        // The reset follows the release, which Prisma does not await: the count is read once every connection is back.
        while (pools.some((p) => p.idleCount < p.totalCount)) await new Promise((resolve) => setTimeout(resolve, 10));
        return pools.reduce((n, p) => n + p.resets.done, 0);
      };
      const before = await resets();
      await probe();
      await probe();
      expect((await resets()) - before).toBe(2);
      expect(pools.every((p) => p.resets.failed === 0)).toBe(true);
    });
  });
}

if (onServer) {
  // One organization pool of one connection.
  process.env.QUARRY_USER_SQL_CONCURRENCY = "1";
  configSingleton.set(undefined);
  forgets("PostgreSQL, an organization's login pool");
} else {
  describe("PGlite", () => {
    beforeAll(async () => {
      await closeDb();
      process.env.QUARRY_EMBEDDED_ANALYTICS = "false";
      configSingleton.set(undefined);
    });
    forgets("the embedded primary (no analytics engine)");
  });
  describe("PGlite", () => {
    beforeAll(async () => {
      await closeDb();
      process.env.QUARRY_EMBEDDED_ANALYTICS = "true";
      process.env.QUARRY_EMBEDDED_ANALYTICS_ENGINES = "1";
      configSingleton.set(undefined);
    });
    forgets("an analytics engine");
  });
}
