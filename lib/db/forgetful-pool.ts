import pg from "pg";

/*
 * Connections that forget (issue 41 §3). A statement that gets past every check can still leave
 * state in its session: a session-level setting (`set_config('search_path', 'pg_catalog', false)`,
 * `SET SESSION …`, an `app.*` setting), a session advisory lock, a prepared statement, a cursor
 * WITH HOLD, a LISTEN. Transaction-local state ends with the transaction; this ends the rest.
 * When a leased connection comes back, `DISCARD ALL` runs on it outside any transaction (RESET
 * ALL, SET SESSION AUTHORIZATION DEFAULT, DEALLOCATE ALL, CLOSE ALL, UNLISTEN *,
 * pg_advisory_unlock_all(), DISCARD PLANS/TEMP/SEQUENCES) before the pool may hand it to anyone;
 * a connection that cannot be reset (still inside a transaction, or broken) is destroyed instead.
 *
 * The reset is one round trip, after the caller's transaction has ended (Prisma releases the
 * connection after COMMIT without awaiting it), so it adds nothing to the caller's own time: it
 * only keeps that connection out of the pool for the round trip. DEALLOCATE ALL is safe here
 * because neither pg nor PrismaPg name statements (PrismaPg's statementNameGenerator is unset).
 */

/**
 * The statement withTenant enters a reader role with (quarry_reader, or an organization's own reader
 * role, quarry_reader_<hash>, lib/db/org-schema.ts): the marker of a lease that ran user SQL.
 */
export const enterReaderRole = (role: string): string => {
  if (!isReaderRole(role)) throw new Error(`${role} is not a reader role`);
  return `SET LOCAL ROLE ${role}`;
};
const isReaderRole = (role: string): boolean => /^quarry_reader(?:_[0-9a-f]{16})?$/.test(role);
const ENTER_READER_ROLE_PREFIX = "SET LOCAL ROLE ";
const entersReaderRole = (text: string): boolean => text.startsWith(ENTER_READER_ROLE_PREFIX) && isReaderRole(text.slice(ENTER_READER_ROLE_PREFIX.length));

export interface ForgetfulPoolOptions {
  /**
   * `every lease`: reset each connection that comes back (pools that serve only reader work).
   * `reader leases`: only one that entered the reader role (the embedded primary, whose one
   * connection serves the application's own statements too, and user SQL when no analytics engine runs).
   */
  forget: "every lease" | "reader leases";
}

type ConnectCallback = (error: Error | undefined, client: pg.PoolClient | undefined, done: (release?: Error | boolean) => void) => void;

export class ForgetfulPool extends pg.Pool {
  /** Resets done, and connections destroyed because a reset failed (tests and benches read them). */
  readonly resets = { done: 0, failed: 0 };

  constructor(
    config: pg.PoolConfig,
    private readonly forgetting: ForgetfulPoolOptions,
  ) {
    super(config);
  }

  connect(): Promise<pg.PoolClient>;
  connect(callback: ConnectCallback): void;
  connect(callback?: ConnectCallback): Promise<pg.PoolClient> | void {
    const leased = super.connect().then((client) => this.forgetOnRelease(client));
    if (!callback) return leased;
    leased.then(
      (client) => callback(undefined, client, client.release),
      (error: Error) => callback(error, undefined, () => undefined),
    );
  }

  private forgetOnRelease(client: pg.PoolClient): pg.PoolClient {
    const release = client.release;
    const query = client.query;
    let marked = this.forgetting.forget === "every lease";
    if (!marked) {
      // Watches this lease's statements for the reader role; restored at release (pg-pool sets a new `release` at each checkout, `query` is the client's own).
      client.query = ((...args: Parameters<typeof query>) => {
        const [first] = args as unknown[];
        const text = typeof first === "string" ? first : (first as { text?: unknown } | undefined)?.text;
        if (typeof text === "string" && entersReaderRole(text)) marked = true;
        return (query as (...a: unknown[]) => unknown).apply(client, args);
      }) as typeof query;
    }
    client.release = (error?: Error | boolean) => {
      client.query = query;
      client.release = release;
      if (error || !marked) return release(error);
      client.query("DISCARD ALL").then(
        () => {
          this.resets.done++;
          release();
        },
        (failure: Error) => {
          this.resets.failed++;
          release(failure);
        },
      );
    };
    return client;
  }
}
