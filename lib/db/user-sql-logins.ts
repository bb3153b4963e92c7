import "server-only";
import pg from "pg";
import { Unavailable } from "@/lib/errors";
import { log } from "@/lib/log";
import { ForgetfulPool } from "./forgetful-pool";
import { orgReaderRole } from "./org-schema";
import {
  ReaderLoginUnavailable,
  loginsCannotBeMade,
  organizationLoginComment,
  organizationLoginName,
  organizationLoginPassword,
  provisionReaderLogin,
  readerLoginProblem,
  withLogin,
} from "./reader-login";
import type { SqlRunner } from "./sql";

/*
 * The pools user SQL runs on, on a PostgreSQL server: one small pool per organization's login
 * (reader-login.ts), opened on the organization's first reader work, closed after a while without
 * any, so thousands of organizations hold no connections. At most `total` pools are open at once
 * (an idle one is closed to make room; when every one is busy, the caller waits, then is answered
 * 503), each of at most `perOrganization` connections: `total × perOrganization` connections in
 * all. With QUARRY_READER_DATABASE_URL every organization shares the operator's one login and pool.
 */

/** How long a failed opening is remembered before the organization's next reader work tries again (an operator may fix the grant meanwhile). */
const RETRY_AFTER_FAILURE_MS = 30_000;
/** How long a caller waits for room among the open pools before it is answered busy. */
const ROOM_WAIT_MS = 30_000;
/** A pool's idle connection closes after this; its pool (and Prisma client) after `idleMs` with no lease. */
const CONNECTION_IDLE_MS = 10_000;
/** invalid_password: the login's password is not the one derived now (QUARRY_SECRET changed); provisioning repairs it. */
const INVALID_PASSWORD = "28P01";

export interface UserSqlLoginsOptions {
  system: SqlRunner;
  databaseUrl: string;
  /** QUARRY_READER_DATABASE_URL: the operator's one login for every organization, or null for a login per organization. */
  readerUrl: string | null;
  /** Open pools at most (the user SQL concurrency). */
  total: number;
  /** Connections per pool at most. */
  perOrganization: number;
  /** A pool with no lease for this long is closed. */
  idleMs: number;
}

/** A reader client of one organization's login, held for one transaction; `release` hands it back. */
export interface UserSqlLease<Client> {
  client: Client;
  release(): void;
}

interface OpenPool<Client> {
  readonly key: string;
  readonly pool: pg.Pool;
  readonly client: Client;
  leases: number;
  lastUsed: number;
  closed: boolean;
  idleTimer?: NodeJS.Timeout;
}

export class UserSqlLogins<Client extends { $disconnect(): Promise<void> }> {
  /** Pools being opened or open, by organization ("" for the operator's shared login). */
  private readonly opening = new Map<string, Promise<OpenPool<Client>>>();
  private readonly open = new Map<string, OpenPool<Client>>();
  private readonly failures = new Map<string, { error: ReaderLoginUnavailable; at: number }>();
  private readonly waiting = new Set<() => void>();
  private applicationLogin: Promise<string> | undefined;
  private closed = false;

  constructor(
    private readonly options: UserSqlLoginsOptions,
    private readonly clientFor: (pool: pg.Pool) => Client,
  ) {}

  /** Whether organizations share the operator's one login (the separation between them then does not hold). */
  get shared(): boolean {
    return this.options.readerUrl !== null;
  }

  /** How many pools are open now (tests, readiness). */
  get openPools(): number {
    return this.open.size;
  }

  /** The client on the organization's confined login; throws ReaderLoginUnavailable with the reason, or Unavailable when every pool stays busy. */
  async lease(orgId: string): Promise<UserSqlLease<Client>> {
    const key = this.shared ? "" : orgId;
    const failure = this.failures.get(key);
    if (failure && Date.now() - failure.at < RETRY_AFTER_FAILURE_MS) throw failure.error;
    const entry = await this.acquire(key);
    let released = false;
    return {
      client: entry.client,
      release: () => {
        if (released) return;
        released = true;
        entry.leases--;
        entry.lastUsed = Date.now();
        if (entry.leases === 0) this.scheduleClose(entry);
        this.wake();
      },
    };
  }

  /**
   * Whether user SQL can run, for the start log and the readiness report: null when it can, else
   * why not. Per organization: whether the application's login may make logins (an organization's
   * own login is checked when it is opened). Shared: the operator's login, opened and checked.
   */
  async problem(): Promise<string | null> {
    try {
      if (!this.shared) return await loginsCannotBeMade(this.options.system);
      (await this.lease("")).release();
      return null;
    } catch (error) {
      return (error as Error).message;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const wake of this.waiting) wake();
    const pending = [...this.opening.values()];
    this.opening.clear();
    this.open.clear();
    await Promise.all(pending.map(async (opening) => this.closePool(await opening.catch(() => undefined))));
  }

  private async acquire(key: string): Promise<OpenPool<Client>> {
    const deadline = Date.now() + ROOM_WAIT_MS;
    for (;;) {
      if (this.closed) throw new Error("the database is closed");
      let opening = this.opening.get(key);
      if (!opening) {
        if (this.opening.size >= Math.max(1, this.options.total) && !this.closeLeastRecentlyUsed()) {
          if (Date.now() >= deadline) throw new Unavailable("Every connection for user-written SQL is busy; retry shortly", 5);
          await this.room(deadline);
          continue;
        }
        opening = this.openPool(key);
        this.opening.set(key, opening);
      }
      let entry: OpenPool<Client>;
      try {
        entry = await opening;
      } catch (error) {
        if (this.opening.get(key) === opening) this.opening.delete(key);
        this.wake();
        const unavailable = error instanceof ReaderLoginUnavailable ? error : new ReaderLoginUnavailable(`user-written SQL is refused: ${(error as Error).message}`);
        for (const [other, { at }] of this.failures) if (Date.now() - at >= RETRY_AFTER_FAILURE_MS) this.failures.delete(other);
        this.failures.set(key, { error: unavailable, at: Date.now() });
        throw unavailable;
      }
      // Closed to make room between its opening and this turn: open it again.
      if (entry.closed) continue;
      this.failures.delete(key);
      entry.leases++;
      clearTimeout(entry.idleTimer);
      return entry;
    }
  }

  /** Closes the open pool unused the longest, to make room; false when every open pool is in use. */
  private closeLeastRecentlyUsed(): boolean {
    let oldest: OpenPool<Client> | undefined;
    for (const entry of this.open.values()) if (entry.leases === 0 && (!oldest || entry.lastUsed < oldest.lastUsed)) oldest = entry;
    if (!oldest) return false;
    this.forget(oldest);
    void this.closePool(oldest);
    return true;
  }

  private room(deadline: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiting.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, Math.max(0, deadline - Date.now()));
      this.waiting.add(wake);
    });
  }

  private wake(): void {
    const [first] = this.waiting;
    first?.();
  }

  private scheduleClose(entry: OpenPool<Client>): void {
    clearTimeout(entry.idleTimer);
    entry.idleTimer = setTimeout(() => {
      if (entry.leases > 0 || entry.closed) return;
      this.forget(entry);
      void this.closePool(entry);
      this.wake();
    }, this.options.idleMs);
    entry.idleTimer.unref();
  }

  private forget(entry: OpenPool<Client>): void {
    entry.closed = true;
    clearTimeout(entry.idleTimer);
    if (this.open.get(entry.key) === entry) this.open.delete(entry.key);
    this.opening.delete(entry.key);
  }

  private async closePool(entry: OpenPool<Client> | undefined): Promise<void> {
    if (!entry) return;
    entry.closed = true;
    clearTimeout(entry.idleTimer);
    await entry.client.$disconnect().catch(() => undefined);
    await entry.pool.end().catch(() => undefined);
  }

  /** Opens the pool of `key`'s login, after checking the login (and making or repairing an organization's). */
  private async openPool(key: string): Promise<OpenPool<Client>> {
    const { system } = this.options;
    let login: string;
    let connectionString: string;
    let repair: (() => Promise<void>) | undefined;
    if (this.shared) {
      const readerUrl = this.options.readerUrl as string;
      login = decodeURIComponent(new URL(readerUrl).username);
      connectionString = readerUrl;
      const problem = await readerLoginProblem(system, login);
      if (problem) throw new ReaderLoginUnavailable(`user-written SQL is refused: its login is unsafe (${problem})`);
      log.warn("every organization's user-written SQL runs on one login (QUARRY_READER_DATABASE_URL): organizations can see and end each other's running statements", { login });
    } else {
      this.applicationLogin ??= system.query<{ name: string }>("SELECT current_user AS name").then(([me]) => me.name);
      login = organizationLoginName(await this.applicationLogin, key);
      const password = organizationLoginPassword(key);
      const comment = organizationLoginComment(key);
      // A member of its organization's reader role alone: the one grantee of the organization's own tables.
      const role = orgReaderRole(key);
      repair = () => provisionReaderLogin(system, login, password, comment, role);
      if (await readerLoginProblem(system, login, comment, role)) await repair();
      const problem = await readerLoginProblem(system, login, comment, role);
      if (problem) throw new ReaderLoginUnavailable(`user-written SQL is refused: its login is unsafe (${problem})`);
      connectionString = withLogin(this.options.databaseUrl, login, password);
    }
    const pool = new ForgetfulPool(
      { connectionString, max: Math.max(1, this.options.perOrganization), idleTimeoutMillis: CONNECTION_IDLE_MS },
      { forget: "every lease" },
    );
    pool.on("error", (error) => log.warn("idle user SQL connection lost", { login, error: error.message }));
    try {
      await this.checkSessionUser(pool, login).catch(async (error: unknown) => {
        if ((error as { code?: string }).code !== INVALID_PASSWORD || !repair) throw error;
        await repair();
        await this.checkSessionUser(pool, login);
      });
    } catch (error) {
      await pool.end();
      if (error instanceof ReaderLoginUnavailable) throw error;
      throw new ReaderLoginUnavailable(`user-written SQL is refused: the login ${login} cannot connect (${(error as Error).message})`);
    }
    const entry: OpenPool<Client> = { key, pool, client: this.clientFor(pool), leases: 0, lastUsed: Date.now(), closed: false };
    if (this.closed) {
      await this.closePool(entry);
      throw new Error("the database is closed");
    }
    this.open.set(key, entry);
    return entry;
  }

  /** The session user is what RESET ROLE returns to: it must be the checked login. */
  private async checkSessionUser(pool: pg.Pool, login: string): Promise<void> {
    const { rows } = await pool.query<{ login: string }>("SELECT session_user AS login");
    if (rows[0]?.login !== login) throw new ReaderLoginUnavailable(`user-written SQL is refused: its connection logs in as ${rows[0]?.login}, not ${login}`);
  }
}
