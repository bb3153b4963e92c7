import { afterAll, describe, expect, it } from "vitest";
import { closeDb, getDb } from "./client";
import { orgReaderRole } from "./org-schema";
import { organizationLoginName } from "./reader-login";
import { withTenant } from "./tenant";

/*
 * Defence in depth under the SQL lexer (lib/query/sql-text.ts refuses set_config in user SQL):
 * a statement that does get to call set_config inside a tenant transaction must still not read
 * another organization or location. On PGlite set_config is refused to the tenant roles outright
 * (migration 0007, run as the superuser); on a PostgreSQL server whose application role is not a
 * superuser (managed services, the test server) that revoke is a no-op, and the tenant settings
 * are only believed when signed (migration 0017).
 *
 * Each statement first changes a setting (the select list is evaluated left to right), then runs
 * a nested statement with query_to_xml, which is planned after the change, as a query run
 * through any path the lexer missed would be.
 */

/** The SQLSTATE of a Prisma raw-query failure, or the rows. */
async function attempt<T>(work: Promise<T>): Promise<{ rows?: T; state?: string }> {
  try {
    return { rows: await work };
  } catch (error) {
    const cause = (error as { meta?: { driverAdapterError?: { cause?: { originalCode?: string } } } }).meta?.driverAdapterError?.cause;
    return { state: cause?.originalCode ?? (error as { code?: string }).code ?? (error as Error).message };
  }
}

/** Runs `change` then counts, in a nested statement, what `count` selects; as `role` in a tenant transaction. */
async function afterChange(scope: { orgId: string; locationIds?: string[] }, change: string, count: string, role: "app" | "reader" = "reader") {
  const nested = count.replaceAll("'", "''");
  const sql = `SELECT ${change} AS changed, query_to_xml('${nested}', false, true, '')::text AS counted`;
  const result = await attempt(withTenant(scope, (tx) => tx.$queryRawUnsafe<{ changed: string; counted: string }[]>(sql), { role, readOnly: role === "reader" }));
  if (result.state) return { refused: result.state };
  const counted = /<n>(\d+)<\/n>/.exec(result.rows?.[0]?.counted ?? "");
  return { n: counted ? Number(counted[1]) : Number.NaN };
}

describe("a tenant statement that sets the tenant settings itself reads nothing more", () => {
  it.each(["reader", "app"] as const)("%s: app.org_id set to another organization sees none of its rows", async (role) => {
    const outcome = await afterChange({ orgId: "org_acme" }, "set_config('app.org_id', 'org_globex', true)", "SELECT count(*) AS n FROM orders WHERE org_id = 'org_globex'", role);
    expect(outcome.refused ?? outcome.n).toSatisfy((v: unknown) => v === "42501" || v === 0);
  });

  it("app.location_ids cleared by a scoped caller does not widen the scope", async () => {
    const outcome = await afterChange(
      { orgId: "org_acme", locationIds: ["loc_acme_nyc"] },
      "set_config('app.location_ids', '', true)",
      "SELECT count(DISTINCT location_id) AS n FROM orders",
    );
    expect(outcome.refused ?? outcome.n).toSatisfy((v: unknown) => v === "42501" || v === 0 || v === 1);
  });

  it("app.location_ids set to another location of the organization shows none of its rows", async () => {
    const outcome = await afterChange(
      { orgId: "org_acme", locationIds: ["loc_acme_nyc"] },
      "set_config('app.location_ids', 'loc_acme_sfo', true)",
      "SELECT count(*) AS n FROM orders WHERE location_id = 'loc_acme_sfo'",
    );
    expect(outcome.refused ?? outcome.n).toSatisfy((v: unknown) => v === "42501" || v === 0);
  });

  it("the settings copied from a transaction of another organization are not believed in this one", async () => {
    // What a signed setting looks like in a globex transaction; replayed in an acme one.
    const signed = await withTenant({ orgId: "org_globex" }, (tx) =>
      tx.$queryRawUnsafe<{ org: string; locations: string; signature: string }[]>(
        "SELECT current_setting('app.org_id', true) AS org, current_setting('app.location_ids', true) AS locations, current_setting('app.tenant_signature', true) AS signature",
      ),
    );
    const { org, signature } = signed[0];
    const outcome = await afterChange(
      { orgId: "org_acme" },
      `set_config('app.org_id', '${org}', true) || set_config('app.tenant_signature', '${signature ?? ""}', true)`,
      "SELECT count(*) AS n FROM orders WHERE org_id = 'org_globex'",
    );
    expect(outcome.refused ?? outcome.n).toSatisfy((v: unknown) => v === "42501" || v === 0);
  });
});

describe("a tenant statement cannot sign settings or change role to get out", () => {
  it("the signing function refuses a read-only transaction, where user SQL runs", async () => {
    const sql = "SELECT quarry_enter_tenant('org_globex', '', 'quarry_reader', NULL, NULL)::text AS entered";
    const outcome = await attempt(withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRawUnsafe(sql), { role: "reader", readOnly: true }));
    expect(outcome.state).toBe("25006");
  });

  it("switching to the app role inside the statement drops the tenant (the signature names the role)", async () => {
    const outcome = await afterChange({ orgId: "org_acme" }, "set_config('role', 'quarry_app', true)", "SELECT count(*) AS n FROM orders");
    expect(outcome.refused ?? outcome.n).toSatisfy((v: unknown) => v === "42501" || v === 0);
  });
});

/*
 * Resetting the role (set_config('role', 'none')) returns a statement to the session's login role.
 * With one login for everything that is the application's own role, which has BYPASSRLS on a
 * PostgreSQL server (docs/deploy.md): no setting can hold it. Reader work therefore runs on a login
 * that is only a member of quarry_reader, which Quarry provisions from DATABASE_URL alone
 * (lib/db/reader-login.ts), so there is nothing to return to. (PGlite refuses set_config to the
 * tenant roles altogether.)
 */
const onServer = process.env.QUARRY_TEST_ENGINE === "postgres";
describe.skipIf(!onServer)("on PostgreSQL, configured with DATABASE_URL only", () => {
  const READER_LOGIN = organizationLoginName("quarry", "org_acme");

  afterAll(() => closeDb());

  it("reader work runs on the organization's reader login", async () => {
    expect((await getDb()).readerLease).toBeDefined();
    const [row] = await withTenant({ orgId: "org_acme" }, (tx) => tx.$queryRawUnsafe<{ login: string; role: string }[]>("SELECT session_user::text AS login, current_user::text AS role"), { role: "reader" });
    // As its organization's own reader role (a member of quarry_reader; its own tables are granted to it alone, migration 0048).
    expect(row).toEqual({ login: READER_LOGIN, role: orgReaderRole("org_acme") });
  });

  it.each(["none", READER_LOGIN])("resetting the role to %s reads nothing of another organization", async (target) => {
    const outcome = await afterChange({ orgId: "org_acme" }, `set_config('role', '${target}', true)`, "SELECT count(*) AS n FROM orders WHERE org_id = 'org_globex'");
    expect(outcome.refused ?? outcome.n).toSatisfy((v: unknown) => v === "42501" || v === 0);
  });

  it("nor does resetting the role and forging the organization", async () => {
    const outcome = await afterChange(
      { orgId: "org_acme" },
      "set_config('role', 'none', true) || set_config('app.org_id', 'org_globex', true)",
      "SELECT count(*) AS n FROM orders WHERE org_id = 'org_globex'",
    );
    expect(outcome.refused ?? outcome.n).toSatisfy((v: unknown) => v === "42501" || v === 0);
  });

  it("the forgeries above still read nothing, and the caller's own rows still read", async () => {
    const forged = await afterChange({ orgId: "org_acme" }, "set_config('app.org_id', 'org_globex', true)", "SELECT count(*) AS n FROM orders WHERE org_id = 'org_globex'");
    expect(forged.n).toBe(0);
    const own = await afterChange({ orgId: "org_acme", locationIds: ["loc_acme_nyc"] }, "'unchanged'", "SELECT count(DISTINCT location_id) AS n FROM orders");
    expect(own.n).toBe(1);
  });
});
