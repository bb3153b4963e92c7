import "@/test/embedded-analytics";
import { beforeAll, describe, expect, it } from "vitest";
import { withTenant } from "./tenant";

// The embedded engine starts its analytics copy on the first reader transaction: outside the tests' time.
beforeAll(() => withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRawUnsafe("SELECT 1 AS one"), { role: "reader", readOnly: true }), 120_000);

/** The driver's SQLSTATE behind a Prisma raw-query failure. */
async function sqlState(work: Promise<unknown>): Promise<string | undefined> {
  try {
    await work;
    return undefined;
  } catch (error) {
    const cause = (error as { meta?: { driverAdapterError?: { cause?: { originalCode?: string } } } }).meta?.driverAdapterError?.cause;
    return cause?.originalCode ?? (error as { code?: string }).code;
  }
}

// Migration 0009: the privilege refuses these, however the name is spelled (the lexer is not the guard).
describe("built-ins that hold a connection are refused to the tenant roles", () => {
  // Revoking from PUBLIC takes effect only as the functions' owner, the bootstrap superuser: true of
  // PGlite, not of a PostgreSQL server's application role (the migration warns there; user SQL runs
  // on a login confined to quarry_reader and passes the parser's allow-list; docs/security.md).
  const onServer = process.env.QUARRY_TEST_ENGINE === "postgres";
  it.skipIf(onServer).each([
    ["reader", 'SELECT U&"pg\\005fsleep"(0.01)'],
    ["reader", "SELECT pg_catalog.pg_sleep_for('10 ms')"],
    ["reader", "SELECT pg_sleep_until(now())"],
    ["app", "SELECT pg_sleep(0.01)"],
    ["reader", "SELECT pg_advisory_lock(42)"],
    ["app", "SELECT pg_try_advisory_lock(1, 2)"],
  ] as const)("%s: %s", async (role, sql) => {
    expect(await sqlState(withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRawUnsafe(sql), { role, readOnly: role === "reader" }))).toBe("42501");
  });

  // Migration 0023: built-ins that run SQL text of their own.
  it.skipIf(onServer).each([
    ["reader", "SELECT query_to_xml('SELECT 1', true, true, '')"],
    ["app", "SELECT pg_catalog.table_to_xml('orders', true, true, '')"],
    ["reader", "SELECT * FROM ts_stat('SELECT to_tsvector(name) FROM locations')"],
    ["reader", "SELECT ts_rewrite('a'::tsquery, 'SELECT ''a''::tsquery, ''b''::tsquery')"],
  ] as const)("%s: %s", async (role, sql) => {
    expect(await sqlState(withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRawUnsafe(sql), { role, readOnly: role === "reader" }))).toBe("42501");
  });

  it("leaves transaction-scoped advisory locks to the app (pg-boss uses them)", async () => {
    await expect(withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRawUnsafe("SELECT 1 AS locked FROM (SELECT pg_advisory_xact_lock(42)) l"))).resolves.toBeDefined();
  });
});
