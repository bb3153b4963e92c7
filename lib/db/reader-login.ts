import "server-only";
import crypto from "node:crypto";
import { deriveKey } from "@/lib/secrets";
import type { SqlRunner } from "./sql";

/*
 * User-written SQL (sql widgets, query datasets) on a PostgreSQL server runs on a login of its
 * organization's own (issue 41 §1), a member of its organization's reader role and nothing else (that
 * role: a member of `quarry_reader` alone, granted the organization's own tables, issue 42): no BYPASSRLS,
 * owns nothing, cannot create or become another role. A statement that resets its role (`RESET
 * ROLE`, `set_config('role', 'none', …)`) lands on that login, which RLS treats as a stranger (the
 * tenant signature is bound to `quarry_reader`, migration 0017): it reads nothing. Resetting the
 * role on the application's own login would land on a role with BYPASSRLS, so user SQL never runs
 * there: without a safe login it is refused, never run with `SET ROLE` alone.
 *
 * One login per organization, because PostgreSQL draws its walls between logins: a login sees the
 * text of its own sessions' statements in pg_stat_activity and may cancel or terminate them, so on
 * one shared login an organization's statement could read and end another's. The pools of these
 * logins: user-sql-logins.ts.
 */

/** Why user SQL cannot run on this server, said so an operator knows what to do. */
export class ReaderLoginUnavailable extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "ReaderLoginUnavailable";
  }
}

/** `text` cut to at most `bytes` UTF-8 bytes, never inside a character. */
const truncateBytes = (text: string, bytes: number) => Buffer.from(text).subarray(0, bytes).toString("utf8").replace(/\uFFFD$/, "");

/**
 * An organization's login: the application login's name (deployments sharing a server keep theirs
 * apart), `_sql_`, and 16 hex digits of a hash of both names, within PostgreSQL's 63 bytes. The
 * hash keeps any organization id (any length, any characters) out of the name; a collision is
 * refused, never shared, as every login carries its organization in its comment.
 */
export function organizationLoginName(applicationLogin: string, orgId: string): string {
  const hash = crypto.createHash("sha256").update(applicationLogin).update("\0").update(orgId).digest("hex").slice(0, 16);
  const suffix = `_sql_${hash}`;
  return truncateBytes(applicationLogin, 63 - suffix.length) + suffix;
}

/** An organization login's password: derived from QUARRY_SECRET, so every replica and worker computes the same one without storing it. */
export const organizationLoginPassword = (orgId: string): string => deriveKey(`postgres-user-sql-login:${orgId}`).toString("base64url");

/** The comment Quarry writes on an organization's login, and checks before every use: whose login it is. */
export const organizationLoginComment = (orgId: string): string => `Quarry: user SQL of organization ${orgId}`;

/**
 * A SCRAM-SHA-256 verifier (RFC 5802/7677, PostgreSQL's `rolpassword` format): the server is sent
 * this instead of the password, so the password never appears in a statement a server may log.
 */
export function scramVerifier(password: string, salt: Buffer = crypto.randomBytes(16), iterations = 4096): string {
  const salted = crypto.pbkdf2Sync(password.normalize("NFKC"), salt, iterations, 32, "sha256");
  const clientKey = crypto.createHmac("sha256", salted).update("Client Key").digest();
  const storedKey = crypto.createHash("sha256").update(clientKey).digest();
  const serverKey = crypto.createHmac("sha256", salted).update("Server Key").digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString("base64")}$${storedKey.toString("base64")}:${serverKey.toString("base64")}`;
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;
const quoteLiteral = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** The roles `login` is a member of. */
async function membershipsOf(system: SqlRunner, login: string): Promise<string[]> {
  const rows = await system.query<{ name: string }>(
    "SELECT r.rolname AS name FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles u ON u.oid = m.member WHERE u.rolname = $1",
    [login],
  );
  return rows.map((row) => row.name);
}

interface RoleFacts {
  rolsuper: boolean;
  rolbypassrls: boolean;
  rolcreaterole: boolean;
  rolcreatedb: boolean;
  rolreplication: boolean;
  rolcanlogin: boolean;
  comment: string | null;
}

const roleFacts = async (system: SqlRunner, login: string): Promise<RoleFacts | undefined> =>
  (
    await system.query<RoleFacts>(
      "SELECT rolsuper, rolbypassrls, rolcreaterole, rolcreatedb, rolreplication, rolcanlogin, shobj_description(oid, 'pg_authid') AS comment FROM pg_roles WHERE rolname = $1",
      [login],
    )
  )[0];

/**
 * What makes a role unfit to run user SQL, or null when it is fit: no attribute that escapes RLS,
 * a member of `memberOf` alone, owns nothing.
 */
async function confinementProblem(system: SqlRunner, name: string, role: RoleFacts, memberOf: string): Promise<string | null> {
  const attributes = (["rolsuper", "rolbypassrls", "rolcreaterole", "rolcreatedb", "rolreplication"] as const).filter((a) => role[a]);
  if (attributes.length > 0) return `${name} has ${attributes.map((a) => a.slice(3).toUpperCase()).join(", ")}`;
  const names = await membershipsOf(system, name);
  if (!names.includes(memberOf)) return `${name} is not a member of ${memberOf}`;
  const others = names.filter((n) => n !== memberOf);
  if (others.length > 0) return `${name} is also a member of ${others.join(", ")}`;
  const [owned] = await system.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner WHERE r.rolname = $1", [name]);
  if (owned.n > 0) return `${name} owns ${owned.n} relation(s)`;
  return null;
}

/**
 * What makes a login unfit for user SQL, or null when it is fit: a member of `memberOf` alone
 * (quarry_reader for the operator's shared login, an organization's reader role for its login, that
 * role itself a member of quarry_reader alone), no attribute that escapes RLS, owns nothing, and (an
 * organization's login) carries that organization's comment.
 */
export async function readerLoginProblem(system: SqlRunner, login: string, comment?: string, memberOf = "quarry_reader"): Promise<string | null> {
  const role = await roleFacts(system, login);
  if (!role) return `the role ${login} does not exist`;
  if (comment !== undefined && role.comment !== comment) return `the role ${login} is not Quarry's login for this organization (its comment is ${JSON.stringify(role.comment)})`;
  if (!role.rolcanlogin) return `${login} cannot log in`;
  const problem = await confinementProblem(system, login, role, memberOf);
  if (problem || memberOf === "quarry_reader") return problem;
  const group = await roleFacts(system, memberOf);
  if (!group) return `the role ${memberOf} does not exist`;
  if (group.rolcanlogin) return `${memberOf} can log in`;
  return confinementProblem(system, memberOf, group, "quarry_reader");
}

/**
 * Makes (or finds) an organization's reader role `role` (orgReaderRole): NOLOGIN, a member of
 * quarry_reader, and the connecting login a member of it, so the application's own reader work may
 * enter it. Idempotent, safe when two processes (or test databases on one server, where roles are
 * shared) do it together; one statement, so it may run inside a caller's transaction.
 */
export async function ensureOrgReaderRole(run: { exec(sql: string): Promise<unknown> }, role: string): Promise<void> {
  if (!/^quarry_reader_[0-9a-f]{16}$/.test(role)) throw new Error(`${role} is not an organization's reader role`);
  await run.exec(`DO $ensure$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = '${role}') THEN
      BEGIN
        CREATE ROLE ${role} NOLOGIN INHERIT NOCREATEDB NOCREATEROLE;
      EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
      END;
    END IF;
    IF NOT pg_catalog.pg_has_role('${role}', 'quarry_reader', 'MEMBER') THEN GRANT quarry_reader TO ${role}; END IF;
    -- From PostgreSQL 16 a CREATEROLE creator holds the new role with ADMIN but without SET: ask for SET there.
    IF current_setting('server_version_num')::int >= 160000 THEN
      IF NOT pg_catalog.pg_has_role(current_user, '${role}', 'SET') THEN EXECUTE format('GRANT %I TO %I WITH SET TRUE', '${role}', current_user); END IF;
    ELSIF NOT pg_catalog.pg_has_role(current_user, '${role}', 'MEMBER') THEN
      EXECUTE format('GRANT %I TO %I', '${role}', current_user);
    END IF;
  END $ensure$`);
}

/** Whether the application's login may make and repair logins: null when it may, else why not. */
export async function loginsCannotBeMade(system: SqlRunner): Promise<string | null> {
  const [me] = await system.query<{ rolsuper: boolean; rolcreaterole: boolean; name: string }>("SELECT rolsuper, rolcreaterole, rolname AS name FROM pg_roles WHERE rolname = current_user");
  if (me?.rolsuper || me?.rolcreaterole) return null;
  return `the database login ${me?.name ?? "(unknown)"} has no CREATEROLE, so Quarry cannot make the per-organization logins user-written SQL runs on; grant it CREATEROLE (docs/deploy.md), or set QUARRY_READER_DATABASE_URL (organizations then share one login)`;
}

/**
 * Creates or repairs an organization's login with the application's login (which must have
 * CREATEROLE or be a superuser): the login and its comment (made together, in one transaction),
 * its attributes, its password, membership of `memberOf` alone (its organization's reader role, made
 * here when missing; quarry_reader for a login of no organization). A role of that name that is not
 * this organization's login is refused, never taken over. Idempotent and safe when replicas (or
 * test databases on one server) do it at the same time. Throws ReaderLoginUnavailable when it cannot.
 */
export async function provisionReaderLogin(system: SqlRunner, login: string, password: string, comment: string, memberOf = "quarry_reader"): Promise<void> {
  const cannot = await loginsCannotBeMade(system);
  if (cannot) throw new ReaderLoginUnavailable(cannot);
  if (memberOf !== "quarry_reader") await ensureOrgReaderRole(system, memberOf);
  const [me] = await system.query<{ rolsuper: boolean }>("SELECT rolsuper FROM pg_roles WHERE rolname = current_user");
  const ident = quoteIdent(login);
  // Only a superuser may even name SUPERUSER, BYPASSRLS or REPLICATION (they default to off); a
  // login that has one anyway is refused by readerLoginProblem.
  const attributes = `LOGIN NOCREATEDB NOCREATEROLE INHERIT${me.rolsuper ? " NOSUPERUSER NOBYPASSRLS NOREPLICATION" : ""}`;
  const verifier = quoteLiteral(scramVerifier(password));
  // Two processes may get here together; what one of them did, the other finds done.
  const tolerate = async (statement: string) => {
    try {
      await system.exec(statement);
    } catch (error) {
      const code = (error as { code?: string }).code;
      // duplicate_object, unique_violation (CREATE ROLE raced), "tuple concurrently updated" (ALTER raced).
      if (code !== "42710" && code !== "23505" && code !== "XX000") throw error;
    }
  };
  const existing = await roleFacts(system, login);
  // One simple query is one transaction: nobody sees the role without its comment.
  if (!existing) await tolerate(`CREATE ROLE ${ident} ${attributes} PASSWORD ${verifier}; COMMENT ON ROLE ${ident} IS ${quoteLiteral(comment)}`);
  if ((await roleFacts(system, login))?.comment !== comment) {
    throw new ReaderLoginUnavailable(`user-written SQL is refused: the role ${login} exists and is not Quarry's login for this organization (docs/deploy.md)`);
  }
  if (existing) await tolerate(`ALTER ROLE ${ident} ${attributes} PASSWORD ${verifier}`);
  const memberships = await membershipsOf(system, login);
  if (!memberships.includes(memberOf)) await tolerate(`GRANT ${quoteIdent(memberOf)} TO ${ident}`);
  for (const name of memberships) if (name !== memberOf) await system.exec(`REVOKE ${quoteIdent(name)} FROM ${ident}`);
}

/** The connection string of `databaseUrl` with another login and password. */
export function withLogin(databaseUrl: string, login: string, password: string): string {
  const url = new URL(databaseUrl);
  url.username = encodeURIComponent(login);
  url.password = encodeURIComponent(password);
  return url.toString();
}
