import "server-only";
import { config } from "@/lib/config";
import { formatLimit } from "@/lib/db/embedded-engine";
import { Unavailable } from "@/lib/errors";
import { processSingleton } from "@/lib/process-singleton";
import { type TenantScope, withTenant } from "@/lib/db/tenant";
import { QueryError } from "./errors";
import { FairQueue, QueueDeadline } from "./fair-queue";
import { byPriority } from "@/lib/db/priority";
import { type OwnReaderTables, ownReaderTables } from "@/lib/db/own-tables";
import { SqlNotAllowed, SqlUnknownName, checkStatement } from "./sql-allow-list";

export interface ReadOnlyOptions {
  /** IANA zone; the transaction's TimeZone, so `date` values meet timestamptz bounds at local midnight. */
  timeZone: string;
  statementTimeoutMs?: number;
}

export const DEFAULT_STATEMENT_TIMEOUT_MS = 10_000;

/**
 * Planning a dashboard statement takes milliseconds; what takes seconds is the planner folding
 * constant expressions a manifest wrote to make it work (issue 41: 16 s from one `_plan`). EXPLAIN
 * gets this much, so a plan's cost stays bounded by what it checks.
 */
export const EXPLAIN_TIMEOUT_MS = 2_000;

/** User SQL slots of this process, shared fairly between organizations (fair-queue.ts); a new queue when the configuration changes (tests, benches). */
const userSqlQueues = processSingleton("userSqlQueues", () => new Map<string, FairQueue>());

/** This process's user-SQL slots under the current configuration: what runs and waits, and `until` for tests that wait on them. */
export function userSqlQueue(): FairQueue {
  const limits = config().userSql;
  const key = JSON.stringify(limits);
  let queue = userSqlQueues.get().get(key);
  if (!queue) {
    queue = new FairQueue({ ...limits, longMs: DEFAULT_STATEMENT_TIMEOUT_MS });
    userSqlQueues.get().set(key, queue);
  }
  return queue;
}

/** How soon a caller turned away for want of a slot should try again. */
const BUSY_RETRY_AFTER_SECONDS = 5;

/**
 * Runs reader work in one of the process's user-SQL slots. An organization whose work ends within
 * its time limit may use every idle slot (its analysts' dashboards run side by side); one whose work
 * runs to `limitMs` (a runaway, cut there) is held to one slot for as long again. When another
 * organization waits, each slot that frees goes to whichever waiting organization runs the fewest,
 * so a newcomer waits for at most one running statement's time limit. A request that waits past the
 * deadline answers 503 with Retry-After rather than piling up.
 *
 * The limit, not a fixed duration, tells a runaway: on a loaded machine eight dashboards side by
 * side each take longer, and a fixed 1 s held them to one slot (c=8 p50 5.7× a single request).
 */
export async function inSlot<T>(scope: TenantScope, limitMs: number, work: () => Promise<T>): Promise<T> {
  try {
    // Background work (alert evaluations) enters after interactive work (lib/db/priority.ts).
    return await byPriority((slotWork) => userSqlQueue().run(scope.orgId, slotWork, limitMs), work);
  } catch (error) {
    if (error instanceof QueueDeadline) {
      throw new Unavailable(`Dashboard queries of your organization are busy (waited ${Math.round(error.waitedMs / 1000)} s for a free slot); retry shortly`, BUSY_RETRY_AFTER_SECONDS);
    }
    throw error;
  }
}

/**
 * Runs one compiled statement (`SELECT row_to_json(_quarry_row.*) AS row FROM (...) _quarry_row`) for a tenant:
 * read-only transaction, the `quarry_reader` role under row-level security, statement_timeout.
 * Database refusals become QueryErrors with a clear message.
 *
 * PostgreSQL enforces statement_timeout itself; the embedded engine cannot (no timer signal in
 * WebAssembly), so its supervisor kills and restarts the engine at the same limit and raises the
 * same 57014 (lib/db/embedded-engine.ts). The row cap is the LIMIT that compile.ts binds into
 * every statement.
 */
export async function runReadOnly(scope: TenantScope, text: string, values: readonly unknown[], options: ReadOnlyOptions): Promise<Record<string, unknown>[]> {
  const timeoutMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  checkAllowed(text, await ownReaderTables(scope.orgId));
  try {
    return await inSlot(scope, timeoutMs, () =>
      withTenant(
        scope,
        async (tx) => {
          const rows = await tx.$queryRawUnsafe<{ row: Record<string, unknown> }[]>(text, ...values);
          return rows.map((r) => r.row);
        },
        { role: "reader", userSql: true, readOnly: true, statementTimeoutMs: timeoutMs, timeoutMs: timeoutMs + 5_000, timeZone: options.timeZone },
      ),
    );
  } catch (error) {
    throw toQueryError(error, timeoutMs);
  }
}

/**
 * Checks that a statement would run for the tenant without running it: the allow-list, then
 * PostgreSQL's `EXPLAIN` (parse, name resolution, types, permissions) under the reader role in a
 * read-only transaction. For a plan of manifests (lib/dashboards/plan.ts): SQL that would fail on
 * the dashboard fails here with the same QueryError.
 */
export async function explainReadOnly(scope: TenantScope, text: string, values: readonly unknown[], options: ReadOnlyOptions): Promise<void> {
  const timeoutMs = options.statementTimeoutMs ?? EXPLAIN_TIMEOUT_MS;
  checkAllowed(text, await ownReaderTables(scope.orgId));
  try {
    // In the organization's user-SQL slots like every reader statement: a plan of many files must
    // not hold the reader pool (on PGlite, the analytics engines) ahead of other organizations.
    await inSlot(scope, timeoutMs, () =>
      withTenant(scope, (tx) => tx.$queryRawUnsafe(`EXPLAIN ${text}`, ...values), {
        role: "reader",
        userSql: true,
        readOnly: true,
        statementTimeoutMs: timeoutMs,
        timeoutMs: timeoutMs + 5_000,
        timeZone: options.timeZone,
      }),
    );
  } catch (error) {
    throw toQueryError(error, timeoutMs);
  }
}

/** Runs one compiled statement for the tenant of the batch it belongs to; rows as in runReadOnly. */
export type StatementRunner = (text: string, values: readonly unknown[], statementTimeoutMs?: number) => Promise<Record<string, unknown>[]>;

/**
 * Thrown by a batch's runner once a statement of its transaction has failed (PostgreSQL refuses
 * every later statement of an aborted transaction). The batch catches it and runs that item again
 * outside the transaction; whoever catches errors inside an item must let it through.
 */
export class BatchTransactionSpent extends Error {
  constructor() {
    super("the batch transaction was aborted by a failed statement");
    this.name = "BatchTransactionSpent";
  }
}

/**
 * Runs `items` in order, their statements in one read-only tenant transaction instead of one
 * transaction each: the tenant settings, role and BEGIN/COMMIT are paid once per dashboard
 * request, not once per widget (per widget they cost as much as the sample dashboard's
 * statements themselves; bench/dashboard-queries.ts). Each statement still gets its own time
 * limit (`SET LOCAL statement_timeout`, only when it changes).
 *
 * A failed statement aborts the transaction: the item it belongs to sees its QueryError as it
 * would alone, the transaction is rolled back, and the items after it go on in a new one. An
 * item that runs a statement after its own failed one (an `sql` widget retrying without a
 * filter) is run again from its start outside any batch. An error an item throws (not a
 * statement's) ends the whole batch.
 */
export async function runReadOnlyBatch<T>(
  scope: TenantScope,
  items: readonly T[],
  options: ReadOnlyOptions & { transactionTimeoutMs: number },
  runItem: (item: T, runner: StatementRunner) => Promise<void>,
): Promise<void> {
  const standalone: StatementRunner = (text, values, statementTimeoutMs) => runReadOnly(scope, text, values, { timeZone: options.timeZone, statementTimeoutMs });
  const initialTimeoutMs = options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  const ownTables = await ownReaderTables(scope.orgId);
  let next = 0;
  while (next < items.length) {
    let failed = false;
    let retryAlone: { item: T } | undefined;
    let thrown: { error: unknown } | undefined;
    try {
      await inSlot(scope, initialTimeoutMs, () => withTenant(
        scope,
        async (tx) => {
          let currentTimeoutMs = initialTimeoutMs;
          const runner: StatementRunner = async (text, values, statementTimeoutMs = initialTimeoutMs) => {
            if (failed) throw new BatchTransactionSpent();
            // Refused before it reaches the transaction, which therefore goes on for the next item.
            checkAllowed(text, ownTables);
            const limitMs = Math.max(1, Math.ceil(statementTimeoutMs));
            try {
              if (limitMs !== currentTimeoutMs) {
                await tx.$executeRawUnsafe(`SET LOCAL statement_timeout = ${limitMs}`);
                currentTimeoutMs = limitMs;
              }
              const rows = await tx.$queryRawUnsafe<{ row: Record<string, unknown> }[]>(text, ...values);
              return rows.map((r) => r.row);
            } catch (error) {
              failed = true;
              throw toQueryError(error, limitMs);
            }
          };
          while (next < items.length && !failed) {
            const item = items[next++];
            try {
              await runItem(item, runner);
            } catch (error) {
              if (error instanceof BatchTransactionSpent) retryAlone = { item };
              else thrown = { error };
              throw error;
            }
          }
          // Roll back the aborted transaction rather than commit it.
          if (failed) throw new BatchTransactionSpent();
        },
        { role: "reader", userSql: true, readOnly: true, statementTimeoutMs: initialTimeoutMs, timeoutMs: options.transactionTimeoutMs, timeZone: options.timeZone },
      ));
    } catch (error) {
      if (thrown) throw thrown.error;
      if (!failed && (error as Error)?.name === "ReaderLoginUnavailable") {
        // No confined login to run user SQL on: each remaining item sees why, as its own error.
        const refusal = toQueryError(error, initialTimeoutMs);
        while (next < items.length) await runItem(items[next++], async () => Promise.reject(refusal));
        return;
      }
      // A failed statement's transaction ends here (rolled back, or gone with a restarted embedded engine).
      if (!failed) throw error;
    }
    if (retryAlone) await runItem(retryAlone.item, standalone);
  }
}

/** Statements already accepted (dashboards repeat theirs): parsing again would find the same. */
const accepted = new Set<string>();
const ACCEPTED_MAX = 2_000;

/**
 * Every statement that runs on the reader passes the parser-based allow-list first, compiled text
 * and user SQL alike (lib/query/sql-allow-list.ts): whatever a manifest's pieces add up to, the
 * database is sent only what the allow-list accepts.
 */
function checkAllowed(text: string, ownTables: OwnReaderTables): void {
  // A statement that names an organization's own table is accepted for that organization's catalog alone.
  const key = ownTables.columns.size === 0 ? text : `${ownTables.stamp}\0${text}`;
  if (accepted.has(key)) return;
  try {
    checkStatement(text, { allowParams: true, ownTables: ownTables.columns });
  } catch (error) {
    // A name that resolves to nothing is the author's SQL error, in the server's words (run.ts reads a missing filter column from them).
    if (error instanceof SqlUnknownName) throw new QueryError("sql_error", `SQL error: ${error.sqlMessage}`, error.sqlMessage);
    if (error instanceof SqlNotAllowed) throw new QueryError("sql_not_allowed", error.message, error.sqlMessage);
    throw error;
  }
  if (accepted.size >= ACCEPTED_MAX) accepted.clear();
  accepted.add(key);
}

interface DriverFailure {
  code?: string;
  message?: string;
}

/** The PostgreSQL error behind a Prisma raw-query failure, when there is one. */
function driverFailure(error: unknown): DriverFailure | null {
  const meta = (error as { meta?: { driverAdapterError?: { cause?: { originalCode?: string; originalMessage?: string } } } } | null)?.meta;
  const cause = meta?.driverAdapterError?.cause;
  if (cause) return { code: cause.originalCode, message: cause.originalMessage };
  const pg = error as { code?: unknown; message?: unknown } | null;
  if (pg && typeof pg.code === "string" && /^[0-9A-Z]{5}$/.test(pg.code)) return { code: pg.code, message: String(pg.message) };
  return null;
}

function toQueryError(error: unknown, timeoutMs: number): Error {
  if (error instanceof QueryError || error instanceof Unavailable) return error;
  // Said to the viewer without the operator's details (those are in the log and /api/ready).
  if (error instanceof Error && error.name === "ReaderLoginUnavailable") return new QueryError("user_sql_unavailable", "SQL written in dashboards cannot run on this server until its administrator sets up the reader login (see /api/ready)");
  const failure = driverFailure(error);
  if (!failure) return error instanceof Error ? error : new Error(String(error));
  switch (failure.code) {
    case "25006":
      return new QueryError("write_not_allowed", "Dashboard queries are read-only: writes are not allowed");
    case "42501":
      return new QueryError("write_not_allowed", "Dashboard queries may only read the warehouse tables (permission denied)");
    case "42601":
      if (failure.message?.includes("multiple commands")) return new QueryError("multiple_statements", "Only one SQL statement is allowed");
      return new QueryError("sql_error", `SQL error: ${failure.message}`);
    case "57014":
      return new QueryError("timeout", `The query ran longer than its time limit of ${formatLimit(timeoutMs)} and was cancelled`);
    default:
      // Syntax, unknown column, type mismatch...: the author's SQL, so the author should see why.
      return new QueryError("sql_error", `SQL error: ${failure.message ?? "the query failed"}`, failure.message);
  }
}
