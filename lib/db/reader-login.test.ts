import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { configSingleton } from "@/lib/config";
import { runReadOnly } from "@/lib/query/execute";
import { QueryError } from "@/lib/query/errors";
import { closeDb, getDb } from "./client";
import { checkReadiness, markStarted } from "./health";
import { ReaderLoginUnavailable, organizationLoginComment, organizationLoginName, provisionReaderLogin, scramVerifier, withLogin } from "./reader-login";
import { withTenant } from "./tenant";
import { ORG_SCHEMA_PREFIX } from "./warehouse";

/*
 * User SQL on a PostgreSQL server configured with DATABASE_URL alone (as README documents it):
 * it must run on its organization's login, a member of quarry_reader and nothing else, provisioned
 * by Quarry, so that resetting its role leads nowhere; where no such login can be had, it is refused.
 * (What one organization's login can do to another's sessions: user-sql-logins.test.ts.)
 */
const onServer = process.env.QUARRY_TEST_ENGINE === "postgres";

describe("the SCRAM verifier sent instead of the password", () => {
  it("matches an independent computation (Python hashlib, RFC 5802 definitions)", () => {
    expect(scramVerifier("pencil", Buffer.from([...Array(16).keys()]))).toBe(
      "SCRAM-SHA-256$4096:AAECAwQFBgcICQoLDA0ODw==$zHCdol2044/ZyWzPLi7oxApCkamKw9Z+E4U/QApd/5Y=:dd5peBOitVnLNFu7VmwP+HiDaaw4OUCv396eVCWhYiE=",
    );
  });

  it("names an organization's login after the application's and the organization, within PostgreSQL's 63 bytes", () => {
    expect(organizationLoginName("quarry", "org_acme")).toMatch(/^quarry_sql_[0-9a-f]{16}$/);
    expect(organizationLoginName("quarry", "org_acme")).toBe(organizationLoginName("quarry", "org_acme"));
    expect(organizationLoginName("quarry", "org_globex")).not.toBe(organizationLoginName("quarry", "org_acme"));
    expect(organizationLoginName("quarry_staging", "org_acme")).not.toBe(organizationLoginName("quarry", "org_acme"));
    expect(Buffer.byteLength(organizationLoginName("é".repeat(40), "x".repeat(500)))).toBeLessThanOrEqual(63);
    // Two application logins alike in their first bytes still name two logins: the hash covers the whole names.
    expect(organizationLoginName(`${"a".repeat(60)}1`, "org")).not.toBe(organizationLoginName(`${"a".repeat(60)}2`, "org"));
  });
});

describe.skipIf(!onServer)("on a PostgreSQL server with DATABASE_URL only", () => {
  const url = () => process.env.DATABASE_URL ?? "";
  const admin = async <T,>(work: (client: pg.Client) => Promise<T>, connectionString = url()): Promise<T> => {
    const client = new pg.Client({ connectionString });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  const login = organizationLoginName("quarry", "org_acme");

  afterEach(async () => {
    await closeDb();
    delete process.env.QUARRY_READER_DATABASE_URL;
    configSingleton.set(undefined);
  });
  afterAll(() => closeDb());

  it("user SQL runs on a provisioned login that is a member of quarry_reader alone", async () => {
    const [row] = await withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRawUnsafe<{ login: string; role: string }[]>("SELECT session_user::text AS login, current_user::text AS role"), {
      role: "reader",
      userSql: true,
      readOnly: true,
    });
    expect(row).toEqual({ login, role: "quarry_reader" });
    const facts = await admin((c) =>
      c.query(
        `SELECT r.rolsuper, r.rolbypassrls, r.rolcreaterole, r.rolcreatedb, r.rolreplication, shobj_description(r.oid, 'pg_authid') AS comment,
                ARRAY(SELECT g.rolname::text FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid WHERE m.member = r.oid) AS member_of
           FROM pg_roles r WHERE r.rolname = $1`,
        [login],
      ),
    );
    expect(facts.rows[0]).toEqual({
      rolsuper: false,
      rolbypassrls: false,
      rolcreaterole: false,
      rolcreatedb: false,
      rolreplication: false,
      comment: organizationLoginComment("org_acme"),
      member_of: ["quarry_reader"],
    });
    expect((await checkReadinessAfterStart()).user_sql).toEqual({ status: "ok", logins: "per_organization" });
  });

  it("the reader login can read the warehouse tables and nothing else: no users, secrets, sessions, keys, queues or counters", async () => {
    (await (await getDb()).readerLease!("org_acme")).release();
    const readable = await admin((c) =>
      c.query<{ name: string }>(
        `SELECT n.nspname || '.' || c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
            AND has_table_privilege($1, c.oid, 'SELECT') ORDER BY 1`,
        [login],
      ),
    );
    // rollup_rows: aggregates of those tables the engine answers widgets from (migration 0036), under the same row-level security.
    const names = readable.rows.map((r) => r.name);
    expect(names.filter((n) => n.startsWith("public."))).toEqual(["public.locations", "public.orders", "public.organizations", "public.products", "public.rollup_rows", "public.sales_targets"]);
    // Beyond them only organizations' own tables (issue 42), each in its organization's schema under forced row-level
    // security. They are granted to the reader role, not yet to each organization's login alone (issue 42's note).
    expect(names.filter((n) => !n.startsWith("public.")).every((n) => n.startsWith(ORG_SCHEMA_PREFIX))).toBe(true);
  });

  it.each(["RESET ROLE", "SET ROLE quarry", "SET ROLE quarry_app", "SET SESSION AUTHORIZATION quarry"])("%s inside user work leads nowhere", async (statement) => {
    const outcome = await withTenant(
      { orgId: "org_acme" },
      async (tx) => {
        try {
          await tx.$executeRawUnsafe(statement);
        } catch {
          return "refused";
        }
        const [row] = await tx.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM orders WHERE org_id = 'org_globex'");
        return row.n;
      },
      { role: "reader", userSql: true, readOnly: true },
    ).catch(() => "refused");
    expect(outcome).toSatisfy((v: unknown) => v === "refused" || v === 0);
  });

  it("a login without CREATEROLE cannot provision one, and says so", async () => {
    await admin((c) =>
      c.query(`DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'quarry_test_no_createrole') THEN
          CREATE ROLE quarry_test_no_createrole LOGIN PASSWORD 'x' NOCREATEROLE;
        END IF; END $$`),
    );
    const limited = withLogin(url(), "quarry_test_no_createrole", "x");
    await admin(async (c) => {
      const system = { exec: async (sql: string) => void (await c.query(sql)), query: async <T,>(sql: string, params?: unknown[]) => (await c.query(sql, params)).rows as T[] };
      await expect(provisionReaderLogin(system, "quarry_test_never_made", "pw", "c")).rejects.toThrow(ReaderLoginUnavailable);
      await expect(provisionReaderLogin(system, "quarry_test_never_made", "pw", "c")).rejects.toThrow(/no CREATEROLE/);
    }, limited);
    const made = await admin((c) => c.query("SELECT 1 FROM pg_roles WHERE rolname = 'quarry_test_never_made'"));
    expect(made.rowCount).toBe(0);
  });

  it("a role of an organization login's name that Quarry did not make for it is refused, never taken over", async () => {
    const squatted = organizationLoginName("quarry", "org_squatted");
    await admin((c) => c.query(`DROP ROLE IF EXISTS ${squatted}; CREATE ROLE ${squatted} LOGIN PASSWORD 'x' IN ROLE quarry_reader`));
    try {
      const refused = withTenant({ orgId: "org_squatted" }, (tx) => tx.$queryRawUnsafe("SELECT 1"), { role: "reader", userSql: true });
      await expect(refused).rejects.toThrow(ReaderLoginUnavailable);
      await expect(refused).rejects.toThrow(/not Quarry's login for this organization/);
      const role = await admin((c) => c.query("SELECT shobj_description(oid, 'pg_authid') AS comment FROM pg_roles WHERE rolname = $1", [squatted]));
      expect(role.rows).toEqual([{ comment: null }]);
    } finally {
      await closeDb();
      await admin((c) => c.query(`DROP ROLE IF EXISTS ${squatted}`));
    }
  });

  it("a login whose password is no longer the derived one (QUARRY_SECRET changed) is repaired at its next opening", async () => {
    await withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRawUnsafe("SELECT 1"), { role: "reader", userSql: true });
    await closeDb();
    await admin((c) => c.query(`ALTER ROLE ${login} PASSWORD 'not-the-derived-one'`));
    const [row] = await withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRawUnsafe<{ login: string }[]>("SELECT session_user::text AS login"), { role: "reader", userSql: true });
    expect(row.login).toBe(login);
  });

  it("the operator's one reader URL serves every organization, and the start log and /api/ready say they are not walled off from each other", async () => {
    await admin((c) =>
      c.query(`DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'quarry_test_shared_sql') THEN
          CREATE ROLE quarry_test_shared_sql LOGIN PASSWORD 'x' IN ROLE quarry_reader;
        END IF; END $$`),
    );
    process.env.QUARRY_READER_DATABASE_URL = withLogin(url(), "quarry_test_shared_sql", "x");
    configSingleton.set(undefined);
    await closeDb();
    const logins = await Promise.all(
      ["org_acme", "org_globex"].map(async (orgId) => {
        const [row] = await withTenant({ orgId }, (tx) => tx.$queryRawUnsafe<{ login: string }[]>("SELECT session_user::text AS login"), { role: "reader", userSql: true });
        return row.login;
      }),
    );
    expect(logins).toEqual(["quarry_test_shared_sql", "quarry_test_shared_sql"]);
    const readiness = await checkReadinessAfterStart();
    expect(readiness.user_sql).toMatchObject({ status: "ok", logins: "shared" });
    expect(readiness.user_sql.reason).toMatch(/see and end each other's running statements/);
  });

  it("a reader URL whose login could leave its scope is refused, never used: user SQL says why, our own reader work still runs", async () => {
    // The application's own login: BYPASSRLS, CREATEROLE.
    process.env.QUARRY_READER_DATABASE_URL = url();
    configSingleton.set(undefined);
    await closeDb();
    const error = await runReadOnly({ orgId: "org_acme" }, "SELECT row_to_json(o.*) AS row FROM (SELECT count(*) AS n FROM orders) o", [], { timeZone: "UTC" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(QueryError);
    expect((error as QueryError).code).toBe("user_sql_unavailable");
    const readiness = await checkReadinessAfterStart();
    expect(readiness.user_sql.status).toBe("refused");
    expect(readiness.user_sql.reason).toMatch(/BYPASSRLS/);
    const [own] = await withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRawUnsafe<{ n: number }[]>("SELECT count(*)::int AS n FROM locations"), { role: "reader", readOnly: true });
    expect(own.n).toBeGreaterThan(0);
  });
});

async function checkReadinessAfterStart() {
  markStarted();
  return checkReadiness();
}
