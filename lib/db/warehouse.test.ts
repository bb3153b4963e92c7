import { describe, expect, it } from "vitest";
import { getDb } from "./client";
import { orgTableSchema } from "./org-schema";
import { ORG_SCHEMA_PREFIX, READER_TABLES, READER_TABLES_CHANGED, WAREHOUSE_COLUMNS, WAREHOUSE_LOCATION_COLUMNS } from "./warehouse";

/* The declaration of the tables dashboards read, held to the database it declares (both engines). */

describe("the reader's tables, as declared and as the database has them", () => {
  it("are exactly the tables quarry_reader may read, with their columns in order", async () => {
    const { system } = await getDb();
    const granted = await system.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND has_table_privilege('quarry_reader', c.oid, 'SELECT') ORDER BY 1`,
    );
    expect(granted.map((g) => g.name)).toEqual(Object.keys(READER_TABLES).sort());
    const columns = await system.query<{ table: string; column: string }>(
      `SELECT table_name AS table, column_name AS column FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name = ANY($1) ORDER BY table_name, ordinal_position`,
      [Object.keys(READER_TABLES)],
    );
    const found: Record<string, string[]> = {};
    for (const { table, column } of columns) (found[table] ??= []).push(column);
    expect(found).toEqual(Object.fromEntries(Object.entries(READER_TABLES).map(([name, t]) => [name, [...t.columns]])));
  });

  it("declare each location policy's column, and the change triggers sit on the warehouse tables alone", async () => {
    const { system } = await getDb();
    const policies = await system.query<{ table: string; qual: string }>(
      "SELECT tablename AS table, qual FROM pg_policies WHERE schemaname = 'public' AND policyname = 'location_scope' AND tablename = ANY($1)",
      [Object.keys(WAREHOUSE_COLUMNS)],
    );
    expect(Object.fromEntries(policies.map((p) => [p.table, /\(?(\w+) = ANY/.exec(p.qual)?.[1]]))).toEqual(WAREHOUSE_LOCATION_COLUMNS);
    const triggers = await system.query<{ schema: string; table: string }>(
      `SELECT DISTINCT n.nspname AS schema, c.relname AS table FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE NOT t.tgisinternal AND t.tgfoid = 'quarry_warehouse_changed'::regproc ORDER BY 1, 2`,
    );
    // In public, the demo warehouse alone; elsewhere only organizations' own tables (lib/data/storage.ts), which are warehouse tables too.
    expect(triggers.filter((t) => t.schema === "public").map((t) => t.table)).toEqual(Object.keys(WAREHOUSE_COLUMNS).sort());
    expect(triggers.filter((t) => t.schema !== "public" && !t.schema.startsWith(ORG_SCHEMA_PREFIX))).toEqual([]);
  });

  it("hold every organization's own table to the warehouse's rules: forced RLS, the tenant policy, read by its organization's reader role alone beside quarry_app", async () => {
    const { system } = await getDb();
    const tables = await system.query<{ schema: string; name: string; forced: boolean; tenant: number; readers: string[]; schemaUsers: string[] }>(
      `SELECT n.nspname AS schema, n.nspname || '.' || c.relname AS name, c.relrowsecurity AND c.relforcerowsecurity AS forced,
              (SELECT count(*)::int FROM pg_policy p WHERE p.polrelid = c.oid AND p.polpermissive AND pg_get_expr(p.polqual, p.polrelid) LIKE '%quarry_current_org()%') AS tenant,
              ARRAY(SELECT DISTINCT g.grantee::text FROM information_schema.role_table_grants g WHERE g.table_schema = n.nspname AND g.table_name = c.relname AND g.privilege_type = 'SELECT' AND g.grantee <> current_user ORDER BY 1) AS readers,
              ARRAY(SELECT r.rolname::text FROM pg_roles r
                     WHERE NOT r.rolsuper AND r.rolname NOT LIKE 'pg\\_%' AND r.rolname NOT IN ('quarry_app', current_user) AND has_schema_privilege(r.oid, n.oid, 'USAGE')
                       AND NOT pg_has_role(r.oid, 'quarry_reader_' || substr(n.nspname, length($2) + 1), 'MEMBER') ORDER BY 1) AS "schemaUsers"
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind = 'r' AND n.nspname LIKE $1`,
      [`${ORG_SCHEMA_PREFIX.replaceAll("_", "\\_")}%`, ORG_SCHEMA_PREFIX],
    );
    // The demo organizations' seeded table (lib/data/demo.ts) at least.
    expect(tables.length).toBeGreaterThan(0);
    // The schema's hash names the organization's reader role too (lib/db/org-schema.ts); its organization's login,
    // a member of that role, reaches them through it.
    const own = (t: { schema: string }) => `quarry_reader_${t.schema.slice(ORG_SCHEMA_PREFIX.length)}`;
    expect(tables.filter((t) => !t.forced || t.tenant !== 1 || t.readers.join() !== `quarry_app,${own(t)}`)).toEqual([]);
    // Nobody else may even look into the schema: not quarry_reader, not another organization's role or login.
    expect(tables.flatMap((t) => t.schemaUsers)).toEqual([]);
  });

  it("carry the reader change trigger (migration 0048), every reader table and every organization's own table, and nothing else", async () => {
    const { system } = await getDb();
    const triggers = await system.query<{ schema: string; table: string }>(
      `SELECT n.nspname AS schema, c.relname AS table FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE NOT t.tgisinternal AND t.tgfoid = 'quarry_reader_tables_changed'::regproc ORDER BY 1, 2`,
    );
    expect(triggers.filter((t) => t.schema === "public").map((t) => t.table)).toEqual(Object.keys(READER_TABLES).sort());
    const own = await system.query<{ schema: string; table: string }>(
      "SELECT n.nspname AS schema, c.relname AS table FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND n.nspname LIKE $1 ORDER BY 1, 2",
      [`${ORG_SCHEMA_PREFIX.replaceAll("_", "\\_")}%`],
    );
    expect(own.length).toBeGreaterThan(0);
    expect(triggers.filter((t) => t.schema !== "public")).toEqual(own);
  });

  it("tell the client of a write to any of them however it is spelled, and of nothing else", async () => {
    const { pool } = await getDb();
    const client = await pool.connect();
    let told = 0;
    const listen = (notice: { message?: string }) => void (notice.message === READER_TABLES_CHANGED && told++);
    client.on("notice", listen);
    const tells = async (sql: string) => {
      const before = told;
      await client.query("SAVEPOINT spelled");
      await client.query(sql);
      await client.query("ROLLBACK TO SAVEPOINT spelled");
      return told > before;
    };
    try {
      await client.query("BEGIN");
      const own = `"${orgTableSchema("org_acme")}".marketing_spend`;
      for (const sql of [
        "MERGE INTO products p USING (SELECT 'none' AS id) x ON p.id = x.id WHEN MATCHED THEN DELETE",
        "WITH gone AS (DELETE FROM orders WHERE id = -1 RETURNING id) SELECT count(*) FROM gone",
        'update /* a comment */ "public"."locations" set name = name where false',
        "TRUNCATE sales_targets",
        "DO $$ BEGIN DELETE FROM rollup_rows WHERE false; END $$",
        `DELETE FROM ${own} WHERE false`,
      ]) {
        expect(await tells(sql), sql).toBe(true);
      }
      for (const sql of ["SELECT count(*) FROM orders", "UPDATE users SET email = email WHERE false", `SELECT count(*) FROM ${own}`]) {
        expect(await tells(sql), sql).toBe(false);
      }
    } finally {
      await client.query("ROLLBACK").catch(() => undefined);
      client.off("notice", listen);
      client.release();
    }
  });
});
