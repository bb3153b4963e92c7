import "server-only";
import { Unavailable } from "@/lib/errors";
import type { ReaderLease } from "./analytics-copy";
import { asInteractive } from "./priority";
import { getDb } from "./client";
import { enterReaderRole } from "./forgetful-pool";
import { orgTableSchema } from "./org-schema";
import type { Prisma } from "./generated/client";

/** A transaction client bound to one tenant; the only handle through which tenant tables are touched. */
export type TenantTx = Prisma.TransactionClient;

/** Whose data a transaction may see: an organization and, optionally, a subset of its locations. */
export interface TenantScope {
  orgId: string;
  /** null or empty: every location of the organization. */
  locationIds?: readonly string[] | null;
}

export interface TenantOptions {
  /** `reader` is the read-only role for user-written SQL; `app` (default) is the service role. */
  role?: "app" | "reader";
  readOnly?: boolean;
  /** Per-statement time limit inside the transaction. */
  statementTimeoutMs?: number;
  /** Upper bound on the whole transaction (Prisma's interactive transaction timeout). */
  timeoutMs?: number;
  /** How long to wait for a connection before answering busy (503); 30 s unless said. */
  connectionWaitMs?: number;
  /** IANA time zone for the transaction (how `date` values meet `timestamptz` bounds). */
  timeZone?: string;
  /**
   * The work runs SQL text a user wrote: only on the confined reader login (a server without one
   * refuses it with a ReaderLoginUnavailable error), never on the application's login. Reader work of our
   * own (rule evaluation) falls back to the application's login under `SET ROLE quarry_reader`.
   */
  userSql?: boolean;
  /**
   * Runs first in the same transaction, as the connecting role, before the tenant is entered: what must
   * commit or roll back with the tenant work and that no tenant role may do (creating the organization itself).
   */
  prelude?: (tx: TenantTx) => Promise<void>;
}

const ROLE_NAMES = { app: "quarry_app", reader: "quarry_reader" } as const;

/**
 * Runs `work` in one transaction as a non-owner role with the tenant set locally,
 * so row-level security decides what every statement sees. Nothing leaks past
 * the transaction: the settings are transaction-local and end with it.
 */
export async function withTenant<T>(scope: TenantScope, work: (tx: TenantTx) => Promise<T>, options: TenantOptions = {}): Promise<T> {
  if (!scope.orgId) throw new Error("withTenant needs an organization id");
  const db = await getDb();
  const role = options.role ?? "app";
  // Reader work of an organization goes to an embedded analytics engine, or on a server to that organization's confined login.
  const confined = db.readerLease;
  const lease = role === "reader" && confined ? await readerLease(() => confined(scope.orgId), options.userSql === true) : undefined;
  const prisma = lease?.prisma ?? db.prisma;
  try {
    // Counted as interactive work unless the caller runs as background work, which paces itself by it (priority.ts).
    return await asInteractive(() => startTransaction(() => prisma.$transaction(
      async (tx) => {
        if (options.prelude) await options.prelude(tx);
        const entered = await enterTenant(tx, scope, role, options);
        // Reader work is always read-only: the signing function refuses read-only transactions, so
        // user SQL cannot sign tenant settings of its own (migration 0017).
        if (options.readOnly || role === "reader") await tx.$executeRawUnsafe("SET TRANSACTION READ ONLY");
        // The reader's statement is the one a forgetful pool watches for (forgetful-pool.ts).
        await tx.$executeRawUnsafe(role === "reader" ? enterReaderRole(entered) : `SET LOCAL ROLE ${ROLE_NAMES.app}`);
        // Reader SQL names an organization's own tables unqualified: they resolve from its schema, after the warehouse (lib/data/storage.ts).
        if (role === "reader") await tx.$executeRawUnsafe(`SET LOCAL search_path TO public, "${orgTableSchema(scope.orgId)}"`);
        return work(tx);
      },
      { timeout: options.timeoutMs ?? 30_000, maxWait: options.connectionWaitMs ?? 30_000 },
    )));
  } finally {
    lease?.release();
  }
}

/**
 * Prisma's "Unable to start a transaction in the given time" (P2028: every connection stayed busy
 * for maxWait) is the database being busy, not a defect: 503 with Retry-After, never a 500.
 */
async function startTransaction<T>(start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    if ((error as { code?: unknown })?.code === "P2028" && /start a transaction/i.test((error as Error).message)) {
      throw new Unavailable("The database is busy; retry shortly", 5);
    }
    throw error;
  }
}

async function readerLease(confined: () => Promise<ReaderLease>, userSql: boolean): Promise<ReaderLease | undefined> {
  if (userSql) return confined();
  try {
    return await confined();
  } catch (error) {
    // By name: Next.js may bundle this module and reader-login.ts apart, each with its own class.
    if ((error as Error)?.name === "ReaderLoginUnavailable") return undefined;
    throw error;
  }
}

/**
 * Sets the tenant (signed: row-level security believes only settings that quarry_enter_tenant
 * wrote for this transaction and this role, migration 0017), the statement timeout and the time
 * zone in one round trip, before the transaction turns read-only and switches role. Answers the role
 * to switch to: for reader work the organization's own reader role when the login may become it
 * (its own tables are granted to it alone, migration 0048), else quarry_reader.
 */
async function enterTenant(
  tx: { $queryRaw: TenantTx["$queryRaw"] },
  scope: TenantScope,
  role: "app" | "reader",
  options: Pick<TenantOptions, "statementTimeoutMs" | "timeZone"> = {},
): Promise<string> {
  const locations = scope.locationIds && scope.locationIds.length > 0 ? scope.locationIds.join(",") : "";
  const timeoutMs = options.statementTimeoutMs ? Math.ceil(options.statementTimeoutMs) : null;
  const [{ entered }] = await tx.$queryRaw<{ entered: string }[]>`SELECT quarry_enter_tenant(${scope.orgId}, ${locations}, ${ROLE_NAMES[role]}, ${timeoutMs}::integer, ${options.timeZone ?? null}::text)::text AS entered`;
  return entered;
}
