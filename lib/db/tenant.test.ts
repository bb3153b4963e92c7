import { describe, expect, it } from "vitest";
import { Unavailable } from "@/lib/errors";
import { getDb } from "./client";
import { withTenant } from "./tenant";

describe("withTenant (row-level security)", () => {
  it("sees nothing without tenant context, even on the app role", async () => {
    const { prisma } = await getDb();
    const counts = await prisma.$transaction(async (tx) => {
      await tx.$executeRawUnsafe("SET LOCAL ROLE quarry_app");
      return tx.$queryRaw<{ orders: number; locations: number; users: number }[]>`
        SELECT (SELECT count(*)::int FROM orders) AS orders, (SELECT count(*)::int FROM locations) AS locations,
               (SELECT count(*)::int FROM users) AS users`;
    });
    expect(counts[0]).toEqual({ orders: 0, locations: 0, users: 0 });
  });

  it("guards every table with an org_id: RLS enabled and forced, a tenant policy, and zero rows without tenant context", async () => {
    const { prisma, system } = await getDb();
    const tables = await system.query<{ name: string; rls: boolean; forced: boolean; tenantPolicies: number }>(
      `SELECT c.relname AS name, c.relrowsecurity AS rls, c.relforcerowsecurity AS forced,
              (SELECT count(*)::int FROM pg_policy p WHERE p.polrelid = c.oid AND p.polpermissive
                 AND pg_get_expr(p.polqual, p.polrelid) LIKE '%quarry_current_org()%') AS "tenantPolicies"
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
          AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'org_id' AND NOT a.attisdropped)
        ORDER BY 1`,
    );
    expect(tables.length).toBeGreaterThanOrEqual(8);
    expect(tables.filter((t) => !t.rls || !t.forced || t.tenantPolicies === 0).map((t) => t.name)).toEqual([]);
    // A table the app role holds no grant on (the instance's setup claim) is closed to it more firmly still.
    const granted = await system.query<{ name: string }>(
      `SELECT name FROM unnest($1::text[]) AS name WHERE has_table_privilege('quarry_app', quote_ident(name), 'SELECT')`,
      [tables.map((t) => t.name)],
    );
    const seen = await prisma.$transaction(async (tx) => {
      await tx.$executeRawUnsafe("SET LOCAL ROLE quarry_app");
      const counts: Record<string, number> = {};
      for (const { name } of granted) {
        const [row] = await tx.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM "${name}"`);
        counts[name] = row.n;
      }
      return counts;
    });
    expect(Object.entries(seen).filter(([, n]) => n > 0)).toEqual([]);
  });

  it("sees only the tenant's own rows", async () => {
    const acme = await withTenant({ orgId: "org_acme" }, (tx) => tx.order.groupBy({ by: ["orgId"], _count: true }));
    expect(acme).toHaveLength(1);
    expect(acme[0].orgId).toBe("org_acme");
    expect(acme[0]._count).toBeGreaterThan(40_000);
    const globexLocations = await withTenant({ orgId: "org_globex" }, (tx) => tx.location.findMany());
    expect(globexLocations.map((l) => l.orgId)).toEqual(globexLocations.map(() => "org_globex"));
  });

  it("narrows to the location scope", async () => {
    const rows = await withTenant({ orgId: "org_acme", locationIds: ["loc_acme_nyc"] }, (tx) => tx.order.groupBy({ by: ["locationId"], _count: true }));
    expect(rows.map((r) => r.locationId)).toEqual(["loc_acme_nyc"]);
  });

  it("cannot write into another tenant", async () => {
    await expect(
      withTenant({ orgId: "org_globex" }, (tx) =>
        tx.location.create({ data: { id: "loc_evil", orgId: "org_acme", code: "EVIL", name: "x", city: "x", region: "x" } }),
      ),
    ).rejects.toThrow();
    const { system } = await getDb();
    expect(await system.query("SELECT id FROM locations WHERE id = 'loc_evil'")).toEqual([]);
  });

  it("does not leak the tenant setting past the transaction", async () => {
    await withTenant({ orgId: "org_acme" }, async () => undefined);
    const { system } = await getDb();
    const [row] = await system.query<{ org: string | null }>("SELECT quarry_current_org() AS org");
    expect(row.org).toBeNull();
  });
});

describe("tenant settings cannot be changed from inside a tenant transaction", () => {
  // Migration 0007 can revoke set_config only as the function's owner, the bootstrap superuser: true
  // of PGlite, not of a PostgreSQL server's application role (managed services give no superuser).
  // There, user SQL is kept from calling set_config by lib/query/sql-text.ts (lib/query/run.test.ts).
  const onServer = process.env.QUARRY_TEST_ENGINE === "postgres";
  it.skipIf(onServer).each(["app", "reader"] as const)("set_config is refused to the %s role", async (role) => {
    await expect(
      withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRawUnsafe("SELECT set_config('app.org_id', 'org_globex', true)"), { role }),
    ).rejects.toThrow(/permission denied/);
  });

  it("keeps the time zone and statement timeout settings working", async () => {
    const [row] = await withTenant(
      { orgId: "org_acme" },
      (tx) => tx.$queryRawUnsafe<{ tz: string; timeout: string }[]>("SELECT current_setting('TimeZone') AS tz, current_setting('statement_timeout') AS timeout"),
      { role: "reader", readOnly: true, timeZone: "Europe/Berlin", statementTimeoutMs: 1500 },
    );
    expect(row).toEqual({ tz: "Europe/Berlin", timeout: "1500ms" });
  });
});

describe("a tenant transaction that cannot get a connection in time", () => {
  it("answers busy with Retry-After (503), not a defect (500)", async () => {
    const db = await getDb();
    // Hold every connection of the pool, then ask for one more.
    const max = (db.pool.options as { max?: number }).max ?? 10;
    const held = await Promise.all(Array.from({ length: max }, () => db.pool.connect()));
    try {
      const error = await withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRawUnsafe("SELECT 1 AS one"), { connectionWaitMs: 200 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Unavailable);
      expect((error as Unavailable).retryAfterSeconds).toBe(5);
    } finally {
      for (const client of held) client.release();
    }
  });
});
