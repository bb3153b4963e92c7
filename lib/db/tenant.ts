import "server-only";
import { getDb } from "./client";
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
  /** IANA time zone for the transaction (how `date` values meet `timestamptz` bounds). */
  timeZone?: string;
}

const ROLE_NAMES = { app: "quarry_app", reader: "quarry_reader" } as const;

/**
 * Runs `work` in one transaction as a non-owner role with the tenant set locally,
 * so row-level security decides what every statement sees. Nothing leaks past
 * the transaction: SET LOCAL and set_config(..., true) end with it.
 */
export async function withTenant<T>(scope: TenantScope, work: (tx: TenantTx) => Promise<T>, options: TenantOptions = {}): Promise<T> {
  if (!scope.orgId) throw new Error("withTenant needs an organization id");
  const db = await getDb();
  // User SQL and other reader work goes to the embedded analytics engine when there is one.
  const prisma = options.role === "reader" && db.readerPrisma ? await db.readerPrisma() : db.prisma;
  const result = await prisma.$transaction(
    async (tx) => {
      if (options.readOnly) await tx.$executeRawUnsafe("SET TRANSACTION READ ONLY");
      // Settings first, role second: the tenant roles may not call set_config (migration 0007),
      // so nothing running as them can move the transaction to another tenant.
      const locations = scope.locationIds && scope.locationIds.length > 0 ? scope.locationIds.join(",") : "";
      await tx.$queryRaw`SELECT set_config('app.org_id', ${scope.orgId}, true), set_config('app.location_ids', ${locations}, true)`;
      if (options.statementTimeoutMs) {
        await tx.$queryRaw`SELECT set_config('statement_timeout', ${String(Math.ceil(options.statementTimeoutMs))}, true)`;
      }
      if (options.timeZone) await tx.$queryRaw`SELECT set_config('TimeZone', ${options.timeZone}, true)`;
      await tx.$executeRawUnsafe(`SET LOCAL ROLE ${ROLE_NAMES[options.role ?? "app"]}`);
      return work(tx);
    },
    { timeout: options.timeoutMs ?? 30_000, maxWait: 30_000 },
  );
  return result;
}
