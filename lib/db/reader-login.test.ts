import { Readable } from "node:stream";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { configSingleton } from "@/lib/config";
import { openRowSource } from "@/lib/data/formats";
import { sourceLimits } from "@/lib/data/limits";
import { loadTable } from "@/lib/data/load";
import { deleteTable } from "@/lib/data/tables";
import { runReadOnly } from "@/lib/query/execute";
import { QueryError } from "@/lib/query/errors";
import { closeDb, getDb } from "./client";
import { orgReaderRole, orgTableSchema } from "./org-schema";
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

  it("user SQL runs on a provisioned login that is a member of its organization's reader role alone, itself a member of quarry_reader alone", async () => {
    const [row] = await withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRawUnsafe<{ login: string; role: string }[]>("SELECT session_user::text AS login, current_user::text AS role"), {
      role: "reader",
      userSql: true,
      readOnly: true,
    });
    expect(row).toEqual({ login, role: orgReaderRole("org_acme") });
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
      member_of: [orgReaderRole("org_acme")],
    });
    const group = await admin((c) =>
      c.query(
        `SELECT r.rolcanlogin, r.rolsuper, r.rolbypassrls, ARRAY(SELECT g.rolname::text FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid WHERE m.member = r.oid) AS member_of
           FROM pg_roles r WHERE r.rolname = $1`,
        [orgReaderRole("org_acme")],
      ),
    );
    expect(group.rows[0]).toEqual({ rolcanlogin: false, rolsuper: false, rolbypassrls: false, member_of: ["quarry_reader"] });
    expect((await checkReadinessAfterStart()).user_sql).toEqual({ status: "ok", logins: "per_organization" });
  });

  it("the reader login can read the warehouse tables and its organization's own tables, nothing else: no users, secrets, sessions, keys, queues, counters or another organization's tables", async () => {
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
    // Beyond them only its organization's own tables (issue 42; the demo's marketing_spend at least), granted to its
    // organization's reader role alone: no other organization's schema (migration 0048).
    const own = names.filter((n) => !n.startsWith("public."));
    expect(own).toContain(`${orgTableSchema("org_acme")}.marketing_spend`);
    expect(own.filter((n) => !n.startsWith(`${orgTableSchema("org_acme")}.`))).toEqual([]);
    const schemas = await admin((c) =>
      c.query<{ name: string }>("SELECT nspname AS name FROM pg_namespace WHERE nspname LIKE $1 AND has_schema_privilege($2, oid, 'USAGE') ORDER BY 1", [`${ORG_SCHEMA_PREFIX.replaceAll("_", "\\_")}%`, login]),
    );
    expect(schemas.rows.map((r) => r.name)).toEqual([orgTableSchema("org_acme")]);
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

/*
 * Issue 42 §3: an organization's own tables are granted to its own reader role alone (migration 0048),
 * so another organization's statement cannot even name them, and what it is told does not say whether
 * a table of that name exists. Both engines: PGlite checks privileges against the role a transaction
 * switched to as PostgreSQL does (docs/data.md "Tenancy").
 */
describe("an organization's own table, seen from another organization", () => {
  // A table only org_acme has (the demo's marketing_spend exists in every demo organization).
  const table = `acme_private_${process.pid}`;
  const acme = { orgId: "org_acme" };
  const globex = { orgId: "org_globex" };

  beforeAll(async () => {
    const csv = "region,spend\nnorth,10\nsouth,32\n";
    await loadTable(
      acme,
      { table, mode: "create", columns: [{ name: "region", type: "text", from: 0 }, { name: "spend", type: "integer", from: 1 }], onBadRow: "fail" },
      await openRowSource(Readable.from([Buffer.from(csv)]), { format: "csv", limits: sourceLimits() }),
    );
  });
  afterAll(async () => {
    await deleteTable(acme, table, { force: true }).catch(() => undefined);
    await closeDb();
  });

  it("names each organization's reader role alike in TypeScript and in the database (quarry_org_reader_role), and after its schema's hash", async () => {
    const ids = ["org_acme", "org_globex", "é\u00a0'\"; DROP", "x".repeat(300)];
    const { system } = await getDb();
    const named = await system.query<{ role: string }>("SELECT quarry_org_reader_role(id) AS role FROM unnest($1::text[]) WITH ORDINALITY AS u(id, n) ORDER BY n", [ids]);
    expect(named.map((r) => r.role)).toEqual(ids.map(orgReaderRole));
    for (const id of ids) expect(orgReaderRole(id).slice(-16)).toBe(orgTableSchema(id).slice(-16));
  });

  it("its organization's reader work runs as its own reader role and reads it", async () => {
    const [row] = await withTenant(acme, (tx) => tx.$queryRawUnsafe<{ role: string; total: number }[]>(`SELECT current_user::text AS role, sum(spend)::int AS total FROM ${table}`), { role: "reader", readOnly: true });
    expect(row).toEqual({ role: orgReaderRole("org_acme"), total: 42 });
    expect(await runReadOnly(acme, `SELECT row_to_json(r.*) AS row FROM (SELECT sum(spend)::int AS total FROM ${table}) r`, [], { timeZone: "UTC" })).toEqual([{ total: 42 }]);
  });

  it("another organization's reader, past the name check, is refused by the database alike whether the table exists or not", async () => {
    const refusal = (sql: string) =>
      withTenant(globex, (tx) => tx.$queryRawUnsafe(sql), { role: "reader", readOnly: true }).then(
        () => "read",
        (error: { meta?: { driverAdapterError?: { cause?: { originalMessage?: string } } }; message?: string }) => error.meta?.driverAdapterError?.cause?.originalMessage ?? error.message,
      );
    const schema = `"${orgTableSchema("org_acme")}"`;
    const existing = await refusal(`SELECT count(*) FROM ${schema}.${table}`);
    expect(existing).toMatch(/permission denied for schema/);
    expect(await refusal(`SELECT count(*) FROM ${schema}.no_such_table_${process.pid}`)).toBe(existing);
    // Unqualified, it resolves from globex's own schema alone: no such relation.
    expect(await refusal(`SELECT count(*) FROM ${table}`)).toBe(`relation "${table}" does not exist`);
    const [privileges] = await (await getDb()).system.query<{ tables: boolean; schema: boolean }>(
      "SELECT has_table_privilege($1, $2, 'SELECT') AS tables, has_schema_privilege($1, $3, 'USAGE') AS schema",
      [orgReaderRole("org_globex"), `${schema}.${table}`, orgTableSchema("org_acme")],
    );
    expect(privileges).toEqual({ tables: false, schema: false });
  });

  it("user SQL that guesses the table's name, bare or in acme's schema, is told what a table that does not exist is told", async () => {
    const told = (sql: string) =>
      runReadOnly(globex, `SELECT row_to_json(r.*) AS row FROM (${sql}) r`, [], { timeZone: "UTC" }).then(
        () => "read",
        (error: QueryError) => `${error.code}: ${error.message}`,
      );
    const missing = `no_such_table_${process.pid}`;
    const neutral = (text: string, name: string) => text.replaceAll(name, "<name>");
    for (const from of [table, `"${orgTableSchema("org_acme")}".${table}`]) {
      const guessed = await told(`SELECT * FROM ${from}`);
      expect(guessed).not.toBe("read");
      expect(neutral(guessed, from.replaceAll('"', ""))).toBe(neutral(await told(`SELECT * FROM ${from.replace(table, missing)}`), from.replace(table, missing).replaceAll('"', "")));
      expect(guessed).not.toContain("permission");
      expect(neutral(guessed, from.replaceAll('"', ""))).toMatch(/^sql_not_allowed: table "<name>" is not allowed in dashboard SQL/);
    }
  });
});
