import "server-only";
import crypto from "node:crypto";
import pg from "pg";
import { deriveKey } from "@/lib/secrets";
import { log } from "@/lib/log";
import type { SqlRunner } from "./sql";

/*
 * User-written SQL (sql widgets, query datasets) on a PostgreSQL server runs on a login of its
 * own that is a member of `quarry_reader` and nothing else: no BYPASSRLS, owns nothing, cannot
 * create or become another role. A statement that resets its role (`RESET ROLE`,
 * `set_config('role', 'none', …)`) lands on that login, which RLS treats as a stranger (the
 * tenant signature is bound to `quarry_reader`, migration 0017): it reads nothing. Resetting the
 * role on the application's own login would land on a role with BYPASSRLS, so user SQL never
 * runs there: without a safe reader login it is refused, never run with `SET ROLE` alone.
 */

/** Why user SQL cannot run on this server, said so an operator knows what to do. */
export class ReaderLoginUnavailable extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "ReaderLoginUnavailable";
  }
}

/** The reader login's name: the application login's name with a suffix, so deployments that share a server keep theirs apart. */
export function readerLoginName(applicationLogin: string): string {
  const suffix = "_user_sql";
  return Buffer.from(applicationLogin).subarray(0, 63 - suffix.length).toString("utf8").replace(/\uFFFD$/, "") + suffix;
}

/** The reader login's password: derived from QUARRY_SECRET, so every replica and worker computes the same one without storing it. */
export const readerLoginPassword = (): string => deriveKey("postgres-reader-login").toString("base64url");

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
}

/** What makes a login unfit for user SQL, or null when it is fit: only quarry_reader, no attribute that escapes RLS, owns nothing. */
export async function readerLoginProblem(system: SqlRunner, login: string): Promise<string | null> {
  const [role] = await system.query<RoleFacts>("SELECT rolsuper, rolbypassrls, rolcreaterole, rolcreatedb, rolreplication, rolcanlogin FROM pg_roles WHERE rolname = $1", [login]);
  if (!role) return `the role ${login} does not exist`;
  const attributes = (["rolsuper", "rolbypassrls", "rolcreaterole", "rolcreatedb", "rolreplication"] as const).filter((a) => role[a]);
  if (attributes.length > 0) return `${login} has ${attributes.map((a) => a.slice(3).toUpperCase()).join(", ")}`;
  if (!role.rolcanlogin) return `${login} cannot log in`;
  const names = await membershipsOf(system, login);
  if (!names.includes("quarry_reader")) return `${login} is not a member of quarry_reader`;
  const others = names.filter((n) => n !== "quarry_reader");
  if (others.length > 0) return `${login} is also a member of ${others.join(", ")}`;
  const [owned] = await system.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner WHERE r.rolname = $1", [login]);
  if (owned.n > 0) return `${login} owns ${owned.n} relation(s)`;
  return null;
}

/**
 * Creates or repairs the reader login with the application's login (which must have CREATEROLE
 * or be a superuser): the login, its attributes, its password, membership of quarry_reader alone.
 * Idempotent and safe when replicas (or test databases on one server) do it at the same time.
 * Throws ReaderLoginUnavailable when the application's login may not manage roles.
 */
export async function provisionReaderLogin(system: SqlRunner, login: string, password: string): Promise<void> {
  const [me] = await system.query<{ rolsuper: boolean; rolcreaterole: boolean; name: string }>("SELECT rolsuper, rolcreaterole, rolname AS name FROM pg_roles WHERE rolname = current_user");
  if (!me?.rolsuper && !me?.rolcreaterole) {
    throw new ReaderLoginUnavailable(
      `the database login ${me?.name ?? "(unknown)"} has no CREATEROLE, so Quarry cannot create the reader login ${login} for user-written SQL; create it (docs/deploy.md) or set QUARRY_READER_DATABASE_URL`,
    );
  }
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
  const [existing] = await system.query<{ ok: boolean }>("SELECT true AS ok FROM pg_roles WHERE rolname = $1", [login]);
  if (!existing) await tolerate(`CREATE ROLE ${ident} ${attributes} PASSWORD ${verifier}`);
  else await tolerate(`ALTER ROLE ${ident} ${attributes} PASSWORD ${verifier}`);
  const memberships = await membershipsOf(system, login);
  if (!memberships.includes("quarry_reader")) await tolerate(`GRANT quarry_reader TO ${ident}`);
  for (const name of memberships) if (name !== "quarry_reader") await system.exec(`REVOKE ${quoteIdent(name)} FROM ${ident}`);
}

/** The connection string of `databaseUrl` with another login and password. */
export function withLogin(databaseUrl: string, login: string, password: string): string {
  const url = new URL(databaseUrl);
  url.username = encodeURIComponent(login);
  url.password = encodeURIComponent(password);
  return url.toString();
}

/**
 * The pool user SQL runs on: QUARRY_READER_DATABASE_URL when set, else the provisioned login.
 * Either is checked at open; a login that could leave its scope is refused, not used.
 */
export async function openReaderPool(options: { system: SqlRunner; databaseUrl: string; readerUrl: string | null; max: number }): Promise<pg.Pool> {
  let connectionString: string;
  let login: string;
  if (options.readerUrl) {
    connectionString = options.readerUrl;
    login = decodeURIComponent(new URL(options.readerUrl).username);
  } else {
    const [me] = await options.system.query<{ name: string }>("SELECT current_user AS name");
    login = readerLoginName(me.name);
    const password = readerLoginPassword();
    await provisionReaderLogin(options.system, login, password);
    connectionString = withLogin(options.databaseUrl, login, password);
  }
  const problem = await readerLoginProblem(options.system, login);
  if (problem) throw new ReaderLoginUnavailable(`user-written SQL is refused: its login is unsafe (${problem})`);
  const pool = new pg.Pool({ connectionString, max: options.max });
  pool.on("error", (error) => log.warn("idle reader connection lost", { error: error.message }));
  try {
    // The session user is what RESET ROLE returns to: it must be the checked login.
    const { rows } = await pool.query<{ login: string }>("SELECT session_user AS login");
    if (rows[0]?.login !== login) throw new ReaderLoginUnavailable(`user-written SQL is refused: its connection logs in as ${rows[0]?.login}, not ${login}`);
  } catch (error) {
    await pool.end();
    if (error instanceof ReaderLoginUnavailable) throw error;
    throw new ReaderLoginUnavailable(`user-written SQL is refused: the reader login ${login} cannot connect (${(error as Error).message})`);
  }
  return pool;
}

/** How long a failed provisioning is remembered before the next user query tries again (an operator may fix the grant meanwhile). */
const RETRY_AFTER_FAILURE_MS = 30_000;

/**
 * The reader login of one process: opened on first use (and at boot, to say at start whether user
 * SQL can run), a failure remembered briefly and then tried again.
 */
export class ReaderLogin<Client> {
  private opened: Promise<{ pool: pg.Pool; client: Client }> | undefined;
  private failure: { error: ReaderLoginUnavailable; at: number } | undefined;

  constructor(
    private readonly options: { system: SqlRunner; databaseUrl: string; readerUrl: string | null; max: number },
    private readonly clientFor: (pool: pg.Pool) => Client,
  ) {}

  /** The client on the confined login; throws ReaderLoginUnavailable with the reason. */
  async client(): Promise<Client> {
    if (this.failure && Date.now() - this.failure.at < RETRY_AFTER_FAILURE_MS) throw this.failure.error;
    this.opened ??= openReaderPool(this.options).then((pool) => ({ pool, client: this.clientFor(pool) }));
    try {
      const { client } = await this.opened;
      this.failure = undefined;
      return client;
    } catch (error) {
      this.opened = undefined;
      const unavailable = error instanceof ReaderLoginUnavailable ? error : new ReaderLoginUnavailable(`user-written SQL is refused: ${(error as Error).message}`);
      this.failure = { error: unavailable, at: Date.now() };
      throw unavailable;
    }
  }

  /** Whether user SQL can run, for the readiness report: null when it can, else why not. */
  async problem(): Promise<string | null> {
    try {
      await this.client();
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  }

  async close(): Promise<void> {
    const opened = this.opened;
    this.opened = undefined;
    if (opened) await (await opened.catch(() => undefined))?.pool.end();
  }
}
