import crypto from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { closeDb, getDb } from "./client";
import { organizationLoginName } from "./reader-login";
import { withTenant } from "./tenant";
import { UserSqlLogins } from "./user-sql-logins";

/*
 * A login per organization (issue 41 §1), on PostgreSQL (PGlite has one session user and one
 * backend per engine: docs/embedded-engine.md). Organization B's statement runs through the same
 * path as any user SQL (withTenant, reader role, userSql); organization A's raw statements run
 * through the tenant helper too, bypassing the allow-list as an escaped statement would.
 */
const onServer = process.env.QUARRY_TEST_ENGINE === "postgres";
const A = "org_acme";
const B = "org_globex";

/** Runs raw SQL as organization `orgId`'s user SQL; the error code when refused. */
const asUserSql = <T,>(orgId: string, statements: string[]) =>
  withTenant(
    { orgId },
    async (tx) => {
      let rows: unknown[] = [];
      for (const statement of statements) rows = await tx.$queryRawUnsafe(statement);
      return rows as T[];
    },
    { role: "reader", userSql: true, readOnly: true, statementTimeoutMs: 20_000 },
  );
/** "ran", or PostgreSQL's error code (else the message) of why not. */
const refusal = (work: Promise<unknown>) =>
  work.then(
    () => "ran",
    (error: { code?: string; message?: string; meta?: { driverAdapterError?: { cause?: { originalCode?: string } } } }) =>
      error.meta?.driverAdapterError?.cause?.originalCode ?? error.code ?? error.message,
  );

async function until<T>(probe: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`not found within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(!onServer)("on PostgreSQL, each organization's user SQL runs on a login of its own", () => {
  afterAll(() => closeDb());

  /** Starts B's statement (a sleep, marked) in its reader transaction, and learns its backend from B's transaction itself. */
  async function runningInB(seconds: number) {
    const marker = `b_marker_${crypto.randomBytes(4).toString("hex")}`;
    let started: (pid: number) => void = () => undefined;
    const backend = new Promise<number>((resolve) => (started = resolve));
    // Settled from the start: its outcome ("ran", or why not) is read at the end.
    const statement = refusal(
      withTenant(
        { orgId: B },
        async (tx) => {
          const [{ pid }] = await tx.$queryRawUnsafe<{ pid: number }[]>("SELECT pg_backend_pid() AS pid");
          started(pid);
          return tx.$queryRawUnsafe(`SELECT pg_sleep(${seconds})::text AS slept /* ${marker} */`);
        },
        { role: "reader", userSql: true, readOnly: true, statementTimeoutMs: 20_000 },
      ),
    );
    const pid = await backend;
    // Another login sees neither its state nor its text: B's own login (a second session) tells when it sleeps.
    await until(async () => {
      const [row] = await asUserSql<{ sleeping: boolean }>(B, ["RESET ROLE", `SELECT coalesce((SELECT wait_event = 'PgSleep' FROM pg_stat_activity WHERE pid = ${pid}), false) AS sleeping`]);
      return row.sleeping || undefined;
    }, 20_000);
    // The marker split in two, so the looking statement's own text does not contain it.
    const half = Math.floor(marker.length / 2);
    const seen = `(SELECT count(*)::int FROM pg_stat_activity WHERE query LIKE '%' || '${marker.slice(0, half)}' || '${marker.slice(half)}' || '%')`;
    return { statement, pid, seen };
  }

  it("A and B run on two logins, each a member of quarry_reader alone", async () => {
    const [a] = await asUserSql<{ login: string }>(A, ["SELECT session_user::text AS login"]);
    const [b] = await asUserSql<{ login: string }>(B, ["SELECT session_user::text AS login"]);
    expect(a.login).toBe(organizationLoginName("quarry", A));
    expect(b.login).toBe(organizationLoginName("quarry", B));
  });

  it("A sees neither B's running statement text nor B's query in pg_stat_activity, as quarry_reader or after RESET ROLE", async () => {
    const { statement, pid, seen } = await runningInB(3);
    for (const prelude of [[], ["RESET ROLE"], ["SELECT set_config('role', 'none', true)"]]) {
      const [row] = await asUserSql<{ query: string | null; seen: number }>(A, [...prelude, `SELECT (SELECT query FROM pg_stat_activity WHERE pid = ${pid}) AS query, ${seen} AS seen`]);
      expect(row.seen).toBe(0);
      expect(row.query ?? "<insufficient privilege>").toBe("<insufficient privilege>");
    }
    expect(await statement).toBe("ran");
  });

  it("A can neither cancel nor terminate B's backend, as quarry_reader or after RESET ROLE: B's statement ends on its own", async () => {
    const { statement, pid } = await runningInB(3);
    for (const call of [`pg_cancel_backend(${pid})`, `pg_terminate_backend(${pid})`]) {
      for (const prelude of [[], ["RESET ROLE"]]) {
        expect(await refusal(asUserSql(A, [...prelude, `SELECT ${call}`]))).toBe("42501");
      }
    }
    expect(await statement).toBe("ran");
  });

  it("the walls are the logins': a second session of B's own login does see B's statement (as every organization did on one shared login)", async () => {
    const { statement, seen } = await runningInB(2);
    const [row] = await asUserSql<{ seen: number }>(B, ["RESET ROLE", `SELECT ${seen} AS seen`]);
    expect(row.seen).toBe(1);
    expect(await statement).toBe("ran");
  });

  it.each(["RESET ROLE", "SELECT set_config('role', 'none', true)"])("%s lands on A's own login, which reads nothing of either organization", async (reset) => {
    const outcome = await refusal(
      asUserSql<{ login: string; role: string; a: number; b: number }>(A, [
        reset,
        "SELECT session_user::text AS login, current_user::text AS role, (SELECT count(*)::int FROM orders WHERE org_id = 'org_acme') AS a, (SELECT count(*)::int FROM orders WHERE org_id = 'org_globex') AS b",
      ]).then(([row]) => {
        expect(row).toEqual({ login: organizationLoginName("quarry", A), role: organizationLoginName("quarry", A), a: 0, b: 0 });
      }),
    );
    // Reading is refused outright (42501) or reads nothing.
    expect(["ran", "42501"]).toContain(outcome);
  });
});

describe.skipIf(!onServer)("on PostgreSQL, the organizations' pools are bounded and close when idle", () => {
  const system = {
    exec: async (sql: string) => (await getDb()).system.exec(sql),
    query: async <T,>(sql: string, params?: unknown[]) => (await getDb()).system.query<T>(sql, params),
  };
  const orgs = ["org_pool_test_1", "org_pool_test_2", "org_pool_test_3"];
  const logins = orgs.map((orgId) => organizationLoginName("quarry", orgId));

  afterAll(async () => {
    const { system: owner } = await getDb();
    for (const login of logins) await owner.exec(`DROP ROLE IF EXISTS ${login}`);
    await closeDb();
  });

  it("at most `total` pools are open: a third organization waits for room, and every pool closes once idle", async () => {
    const idleMs = 300;
    const registry = new UserSqlLogins(
      { system, databaseUrl: process.env.DATABASE_URL ?? "", readerUrl: null, total: 2, perOrganization: 1, idleMs },
      (pool: pg.Pool) => ({ pool, $disconnect: async () => undefined }),
    );
    try {
      const first = await registry.lease(orgs[0]);
      const second = await registry.lease(orgs[1]);
      await first.client.pool.query("SELECT 1");
      await second.client.pool.query("SELECT 1");
      let thirdOpened = false;
      const third = registry.lease(orgs[2]).then((lease) => {
        thirdOpened = true;
        return lease;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(thirdOpened).toBe(false);
      expect(registry.openPools).toBe(2);
      first.release();
      const lease = await third;
      await lease.client.pool.query("SELECT 1");
      expect(registry.openPools).toBe(2);
      const { system: owner } = await getDb();
      const connected = await owner.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = ANY($1)", [logins]);
      expect(connected[0].n).toBeLessThanOrEqual(2);
      second.release();
      lease.release();
      await until(async () => (registry.openPools === 0 ? true : undefined), idleMs * 20);
      await until(async () => {
        const [row] = await owner.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE usename = ANY($1)", [logins]);
        return row.n === 0 ? true : undefined;
      }, 10_000);
    } finally {
      await registry.close();
    }
  });
});
