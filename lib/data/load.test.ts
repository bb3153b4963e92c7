import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { configSingleton } from "@/lib/config";
import { loadConfig } from "@/lib/config/schema";
import { getDb } from "@/lib/db/client";
import { withTenant, type TenantScope } from "@/lib/db/tenant";
import { Conflict, NotFound, TooLarge } from "@/lib/errors";
import { asJsonRows } from "@/lib/query/compile";
import { QueryError } from "@/lib/query/errors";
import { runReadOnly } from "@/lib/query/execute";
import type { RowSource } from "./formats/types";
import type { Principal } from "@/lib/access/roles";
import { BadValue, type LoadRequest, loadTable } from "./load";
import { qualifiedTable } from "./storage";
import { deleteTable, getTable, listTables, TableInUse } from "./tables";

const acme: TenantScope = { orgId: "org_acme" };
const globex: TenantScope = { orgId: "org_globex" };
const uniqueName = (prefix: string) => `${prefix}_${randomBytes(4).toString("hex")}`;

/** A RowSource over arrays; `pause` runs after the row of that index is yielded. */
function source(header: string[], rows: (string | null)[][], pause?: { at: number; run: () => Promise<void> }): RowSource {
  return {
    header,
    rows: (async function* () {
      for (const [i, row] of rows.entries()) {
        yield row;
        if (pause && i === pause.at) await pause.run();
      }
    })(),
  };
}

const ALL_TYPES_HEADER = ["name", "qty", "price", "paid", "day", "at"];
const allTypes = (table: string, mode: LoadRequest["mode"] = "create"): LoadRequest => ({
  table,
  mode,
  onBadRow: "fail",
  columns: [
    { name: "name", type: "text", from: 0 },
    { name: "qty", type: "integer", from: 1 },
    { name: "price", type: "numeric", from: 2 },
    { name: "paid", type: "boolean", from: 3 },
    { name: "day", type: "date", from: 4 },
    { name: "at", type: "timestamptz", from: 5 },
  ],
});

async function rowsOf(scope: TenantScope, table: string, orderBy = "1"): Promise<Record<string, unknown>[]> {
  return withTenant(scope, (tx) => tx.$queryRawUnsafe(`SELECT * FROM ${qualifiedTable(acme.orgId, table)} ORDER BY ${orderBy}`));
}

const countOf = async (scope: TenantScope, table: string) =>
  (await withTenant(scope, (tx) => tx.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${qualifiedTable(acme.orgId, table)}`)))[0].n;

afterEach(() => configSingleton.set(undefined));

describe("loadTable", () => {
  it("creates a table of every type, values stored as PostgreSQL reads them, and catalogs it", async () => {
    const table = uniqueName("all_types");
    const report = await loadTable(acme, allTypes(table), source(ALL_TYPES_HEADER, [
      ["Widget", "12", "3.50", "yes", "2026-01-31", "2026-01-31T10:00:00Z"],
      ["Gadget", "-4", "1e3", "f", "2026/02/01", "2026-02-01 08:30"],
      ["", null, "", "", "", ""],
    ]));
    expect(report).toMatchObject({ rowsLoaded: 3, rowsSkipped: 0, rowCount: 3, mode: "create" });
    const rows = await withTenant(acme, (tx) => tx.$queryRawUnsafe<Record<string, string | null>[]>(
      `SELECT name, qty::text, price::text, paid::text, day::text, (at AT TIME ZONE 'UTC')::text AS at, pg_typeof(qty)::text AS qty_type FROM ${qualifiedTable(acme.orgId, table)} ORDER BY name`,
    ));
    expect(rows).toEqual([
      { name: "", qty: null, price: null, paid: null, day: null, at: null, qty_type: "bigint" },
      { name: "Gadget", qty: "-4", price: "1000", paid: "false", day: "2026-02-01", at: "2026-02-01 13:30:00", qty_type: "bigint" },
      { name: "Widget", qty: "12", price: "3.50", paid: "true", day: "2026-01-31", at: "2026-01-31 10:00:00", qty_type: "bigint" },
    ]);
    const entry = await getTable(acme, table);
    expect(entry).toMatchObject({ name: table, rowCount: 3, keyColumns: [], location: null });
    expect(entry.columns.map((c) => c.type)).toEqual(["text", "integer", "numeric", "boolean", "date", "timestamptz"]);
    expect(entry.bytes).toBeGreaterThan(0);
  });

  it.each([
    ["qty", 1, "12.5"],
    ["price", 2, "3,50"],
    ["paid", 3, "maybe"],
    ["day", 4, "2026-02-30"],
    ["at", 5, "yesterday"],
  ])("refuses a bad %s value naming row, column and value, and keeps nothing of the load", async (column, index, value) => {
    const table = uniqueName("bad");
    const good = ["A", "1", "2", "true", "2026-01-01", "2026-01-01 00:00"];
    const bad = good.map((v, i) => (i === index ? value : v));
    await loadTable(acme, allTypes(table), source(ALL_TYPES_HEADER, [good]));
    const error = await loadTable(acme, allTypes(table, "append"), source(ALL_TYPES_HEADER, [good, good, bad, good])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadValue);
    expect((error as BadValue).bad).toMatchObject({ row: 3, column, value });
    expect((error as BadValue).message).toContain(`Row 3, column "${column}"`);
    expect(await countOf(acme, table)).toBe(1);
    // A create that fails leaves no table behind.
    const fresh = uniqueName("bad_new");
    await expect(loadTable(acme, allTypes(fresh), source(ALL_TYPES_HEADER, [good, bad]))).rejects.toBeInstanceOf(BadValue);
    await expect(getTable(acme, fresh)).rejects.toBeInstanceOf(NotFound);
  });

  it("skips bad rows when asked and reports each one", async () => {
    const table = uniqueName("skip");
    const report = await loadTable(acme, { ...allTypes(table), onBadRow: "skip" }, source(ALL_TYPES_HEADER, [
      ["A", "x", "1", "t", "2026-01-01", ""],
      ["B", "2", "1", "t", "2026-01-01", ""],
      ["C", "3", "1", "t", "nope", ""],
    ]));
    expect(report).toMatchObject({ rowsLoaded: 1, rowsSkipped: 2 });
    expect(report.badRows.map((b) => [b.row, b.column, b.value])).toEqual([[1, "qty", "x"], [3, "day", "nope"]]);
    expect((await rowsOf(acme, table)).map((r) => r.name)).toEqual(["B"]);
  });

  it("appends (adding a new column only when asked), refuses a type change on append, and rebuilds on a replace that changes a type", async () => {
    const table = uniqueName("modes");
    const req = (mode: LoadRequest["mode"], extra: Partial<LoadRequest> = {}): LoadRequest => ({ table, mode, onBadRow: "fail", columns: [{ name: "id", type: "integer", from: 0 }, { name: "v", type: "text", from: 1 }], ...extra });
    await loadTable(acme, req("create"), source(["id", "v"], [["1", "a"], ["2", "b"]]));
    await expect(loadTable(acme, req("create"), source(["id", "v"], [["3", "c"]]))).rejects.toBeInstanceOf(Conflict);
    await loadTable(acme, req("append"), source(["id", "v"], [["3", "c"]]));
    expect(await countOf(acme, table)).toBe(3);
    const withExtra = { columns: [{ name: "id", type: "integer" as const, from: 0 }, { name: "w", type: "numeric" as const, from: 1 }] };
    await expect(loadTable(acme, req("append", withExtra), source(["id", "w"], [["4", "1.5"]]))).rejects.toThrow(/no column "w"/);
    const added = await loadTable(acme, req("append", { ...withExtra, addNewColumns: true }), source(["id", "w"], [["4", "1.5"]]));
    expect(added.columnsAdded).toEqual(["w"]);
    expect((await rowsOf(acme, table)).map((r) => [Number(r.id), r.v, r.w === null ? null : String(r.w)])).toEqual([[1, "a", null], [2, "b", null], [3, "c", null], [4, null, "1.5"]]);
    const asNumeric = { columns: [{ name: "id", type: "numeric" as const, from: 0 }, { name: "v", type: "text" as const, from: 1 }] };
    await expect(loadTable(acme, req("append", asNumeric), source(["id", "v"], [["5.5", "e"]]))).rejects.toThrow(/reloads the table/);
    const replaced = await loadTable(acme, req("replace", asNumeric), source(["id", "v"], [["5.5", "e"]]));
    expect(replaced).toMatchObject({ rebuilt: true, rowCount: 1 });
    expect((await getTable(acme, table)).columns).toEqual([{ name: "id", type: "numeric" }, { name: "v", type: "text" }]);
    await expect(loadTable(acme, { ...req("append"), table: uniqueName("missing") }, source(["id", "v"], []))).rejects.toBeInstanceOf(NotFound);
  });

  it("upserts on key columns: new keys inserted, existing ones updated, a key twice in one file keeps its last row", async () => {
    const table = uniqueName("upsert");
    const req = (mode: LoadRequest["mode"]): LoadRequest => ({ table, mode, onBadRow: "fail", keyColumns: ["sku"], columns: [{ name: "sku", type: "text", from: 0 }, { name: "stock", type: "integer", from: 1 }] });
    await loadTable(acme, req("create"), source(["sku", "stock"], [["a", "1"], ["b", "2"]]));
    await loadTable(acme, req("upsert"), source(["sku", "stock"], [["b", "20"], ["c", "3"], ["c", "30"]]));
    expect((await rowsOf(acme, table)).map((r) => [r.sku, Number(r.stock)])).toEqual([["a", 1], ["b", 20], ["c", 30]]);
    await expect(loadTable(acme, req("upsert"), source(["sku", "stock"], [[null, "1"]]))).rejects.toThrow(/key column's value is empty/);
  });

  it("moves a file larger than one move statement's batch whole, and upserts across batches (last row wins)", async () => {
    const table = uniqueName("batches");
    const req = (mode: LoadRequest["mode"]): LoadRequest => ({ table, mode, onBadRow: "skip", keyColumns: ["k"], columns: [{ name: "k", type: "integer", from: 0 }, { name: "v", type: "text", from: 1 }] });
    // 120,001 rows: three move statements (50,000 staged rows each); a bad row leaves a gap in the ordinals.
    const rows = Array.from({ length: 120_001 }, (_, i) => [String(i), `first ${i}`]);
    rows[60_000] = ["not a number", "skipped"];
    const created = await loadTable(acme, req("create"), source(["k", "v"], rows));
    expect([created.rowsLoaded, created.rowsSkipped, created.rowCount]).toEqual([120_000, 1, 120_000]);
    // Key 7 in the first batch, again in the second and third: its last row wins; key 119,999 only in the last batch.
    const upserted = await loadTable(acme, req("upsert"), source(["k", "v"], [
      ["7", "batch 1"], ...Array.from({ length: 60_000 }, (_, i) => [String(200_000 + i), "new"]), ["7", "batch 2"],
      ...Array.from({ length: 50_000 }, () => ["119999", "repeated"]), ["7", "batch 3"], ["119999", "last"],
    ]));
    expect(upserted.rowCount).toBe(180_000);
    const picked = await withTenant(acme, (tx) => tx.$queryRawUnsafe<{ k: number; v: string }[]>(`SELECT k::int AS k, v FROM ${qualifiedTable(acme.orgId, table)} WHERE k IN (7, 60000, 119999, 200000) ORDER BY k`));
    expect(picked).toEqual([{ k: 7, v: "batch 3" }, { k: 119_999, v: "last" }, { k: 200_000, v: "new" }]);
  }, 300_000);

  it("replaces atomically: a reader during the load sees the old rows, after it the new", async () => {
    const table = uniqueName("swap");
    const req = (mode: LoadRequest["mode"]): LoadRequest => ({ table, mode, onBadRow: "fail", columns: [{ name: "n", type: "integer", from: 0 }] });
    await loadTable(acme, req("create"), source(["n"], Array.from({ length: 50 }, (_, i) => [String(i)])));
    let during: Promise<number> | undefined;
    const rows = Array.from({ length: 20_000 }, (_, i) => [String(i)]);
    const pause = { at: 10_000, run: async () => { during = countOf(acme, table); await new Promise((resolve) => setTimeout(resolve, 50)); } };
    await loadTable(acme, req("replace"), source(["n"], rows, pause));
    const seen = await during!;
    // PostgreSQL: the reader ran beside the load and saw the old rows. PGlite (one connection): it ran before or after, whole.
    const db = await getDb();
    if (db.kind === "postgres") expect(seen).toBe(50);
    else expect([50, 20_000]).toContain(seen);
    expect(await countOf(acme, table)).toBe(20_000);
  });

  it("a load that dies midway leaves the previous rows intact", async () => {
    const table = uniqueName("killed");
    const req = (mode: LoadRequest["mode"]): LoadRequest => ({ table, mode, onBadRow: "fail", columns: [{ name: "n", type: "integer", from: 0 }] });
    await loadTable(acme, req("create"), source(["n"], [["1"], ["2"]]));
    const dying: RowSource = { header: ["n"], rows: (async function* () { yield ["10"]; yield ["11"]; throw new Error("connection lost"); })() };
    await expect(loadTable(acme, req("replace"), dying)).rejects.toThrow("connection lost");
    expect((await rowsOf(acme, table)).map((r) => Number(r.n))).toEqual([1, 2]);
    const history = await withTenant(acme, (tx) => tx.$queryRawUnsafe<{ state: string; error: string }[]>("SELECT state, error FROM org_table_loads WHERE table_name = $1 ORDER BY started_at", table));
    expect(history.map((h) => h.state)).toEqual(["done", "failed"]);
  });

  it.runIf(process.env.QUARRY_TEST_ENGINE === "postgres")("a load whose database session is killed midway leaves the previous rows intact (PostgreSQL)", async () => {
    const table = uniqueName("terminated");
    const req = (mode: LoadRequest["mode"]): LoadRequest => ({ table, mode, onBadRow: "fail", columns: [{ name: "n", type: "integer", from: 0 }] });
    await loadTable(acme, req("create"), source(["n"], [["1"], ["2"]]));
    const { system } = await getDb();
    let killed = 0;
    const kill = async () => {
      const rows = await system.query<{ killed: boolean }>("SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE query LIKE '%quarry_load_staging%' AND xact_start IS NOT NULL AND pid <> pg_backend_pid()");
      killed = rows.filter((r) => r.killed).length;
    };
    const rows = Array.from({ length: 300_000 }, (_, i) => [String(i)]);
    await expect(loadTable(acme, req("replace"), source(["n"], rows, { at: 200_000, run: kill }))).rejects.toThrow();
    expect(killed).toBe(1);
    expect((await rowsOf(acme, table)).map((r) => Number(r.n))).toEqual([1, 2]);
  });

  it("refuses before any work when the organization's limits leave no room", async () => {
    const table = uniqueName("limits");
    await loadTable(acme, { table, mode: "create", onBadRow: "fail", columns: [{ name: "n", type: "integer", from: 0 }] }, source(["n"], [["1"]]));
    const usage = (await listTables(acme)).length;
    configSingleton.set(loadConfig({ ...process.env, QUARRY_DATA_MAX_TABLES: String(usage) }));
    let pulled = 0;
    const counted: RowSource = { header: ["n"], rows: (async function* () { pulled++; yield ["1"]; })() };
    await expect(loadTable(acme, { table: uniqueName("over"), mode: "create", onBadRow: "fail", columns: [{ name: "n", type: "integer", from: 0 }] }, counted)).rejects.toBeInstanceOf(TooLarge);
    expect(pulled).toBe(0);
    const rowsNow = (await listTables(acme)).reduce((sum, t) => sum + t.rowCount, 0);
    configSingleton.set(loadConfig({ ...process.env, QUARRY_DATA_MAX_ROWS: String(rowsNow + 2) }));
    const error = await loadTable(acme, { table, mode: "append", onBadRow: "fail", columns: [{ name: "n", type: "integer", from: 0 }] }, source(["n"], [["2"], ["3"], ["4"]])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TooLarge);
    expect((error as Error).message).toMatch(/Row 3: .*QUARRY_DATA_MAX_ROWS/);
    expect(await countOf(acme, table)).toBe(1);
  });

  it("moves the organization's warehouse version on every load", async () => {
    const table = uniqueName("version");
    const version = async () => (await withTenant(acme, (tx) => tx.$queryRawUnsafe<{ v: string }[]>("SELECT version::text AS v FROM warehouse_versions")))[0].v;
    const before = await version();
    await loadTable(acme, { table, mode: "create", onBadRow: "fail", columns: [{ name: "n", type: "integer", from: 0 }] }, source(["n"], [["1"]]));
    const after = await version();
    expect(BigInt(after)).toBeGreaterThan(BigInt(before));
  });
});

describe("tenancy of an organization's tables", () => {
  it("another organization sees neither the catalog entry nor a row, even naming the table", async () => {
    const table = uniqueName("private");
    await loadTable(acme, { table, mode: "create", onBadRow: "fail", columns: [{ name: "n", type: "integer", from: 0 }] }, source(["n"], [["1"]]));
    expect((await listTables(globex)).map((t) => t.name)).not.toContain(table);
    await expect(getTable(globex, table)).rejects.toBeInstanceOf(NotFound);
    expect(await countOf(globex, table)).toBe(0);
    await expect(deleteTable(globex, table)).rejects.toBeInstanceOf(NotFound);
    expect(await countOf(acme, table)).toBe(1);
  });

  it.each(["id", "code"] as const)("a location-limited manager sees only their locations' rows (location column by %s)", async (by) => {
    const { system } = await getDb();
    const locations = await system.query<{ id: string; code: string }>("SELECT id, code FROM locations WHERE org_id = 'org_acme' ORDER BY id LIMIT 2");
    const table = uniqueName(`by_${by}`);
    await loadTable(
      acme,
      { table, mode: "create", onBadRow: "fail", locationColumn: { name: "store", by }, columns: [{ name: "store", type: "text", from: 0 }, { name: "n", type: "integer", from: 1 }] },
      source(["store", "n"], [[locations[0][by], "1"], [locations[1][by], "2"], [locations[1][by], "3"]]),
    );
    expect(await countOf(acme, table)).toBe(3);
    expect(await countOf({ orgId: acme.orgId, locationIds: [locations[0].id] }, table)).toBe(1);
    expect(await countOf({ orgId: acme.orgId, locationIds: [locations[1].id] }, table)).toBe(2);
    // A replace that does not name the location column keeps the policy.
    await loadTable(acme, { table, mode: "replace", onBadRow: "fail", columns: [{ name: "store", type: "text", from: 0 }, { name: "n", type: "integer", from: 1 }] }, source(["store", "n"], [[locations[1][by], "4"]]));
    expect(await countOf({ orgId: acme.orgId, locationIds: [locations[0].id] }, table)).toBe(0);
  });
});

describe("dropping a table", () => {
  it("drops the table and its entry, and refuses while a published dashboard reads it unless forced", async () => {
    const table = uniqueName("dropme");
    await loadTable(acme, { table, mode: "create", onBadRow: "fail", columns: [{ name: "n", type: "integer", from: 0 }] }, source(["n"], [["1"]]));
    const { system } = await getDb();
    const dashboardId = `dsh_${table}`;
    await system.query(
      `INSERT INTO dashboards (id, org_id, name, slug, draft_yaml, published_version, created_by, updated_by) VALUES ($1, 'org_acme', $2, $2, '', 1, 'usr_acme_admin', 'usr_acme_admin')`,
      [dashboardId, table],
    );
    await system.query(
      `INSERT INTO dashboard_versions (org_id, dashboard_id, version, name, spec_yaml, published_by) VALUES ('org_acme', $1, 1, $2, $3, 'usr_acme_admin')`,
      [dashboardId, table, `datasets:\n  d:\n    from: ${table}\n`],
    );
    await system.query(
      `INSERT INTO widget_alerts (id, org_id, dashboard_id, name, widget_id, definition, cadence_kind, owner_id, shared_role) VALUES ($1, 'org_acme', $2, 'Spend drops', 'w', '{}', 'on_data_change', 'usr_acme_admin', 'admin')`,
      [`wal_${table}`, dashboardId],
    );
    const refused = await deleteTable(acme, table).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TableInUse);
    expect((refused as TableInUse).readers).toEqual([{ kind: "dashboard", id: dashboardId, name: table }, { kind: "alert_rule", id: `wal_${table}`, name: "Spend drops" }]);
    expect((refused as TableInUse).message).toContain("alert rule \"Spend drops\"");
    expect(await countOf(acme, table)).toBe(1);
    await deleteTable(acme, table, { force: true });
    await expect(getTable(acme, table)).rejects.toBeInstanceOf(NotFound);
    const [left] = await system.query<{ t: string | null }>("SELECT to_regclass($1)::text AS t", [qualifiedTable(acme.orgId, table)]);
    expect(left.t).toBeNull();
    await system.query("DELETE FROM dashboards WHERE id = $1", [dashboardId]);
  });
});

describe("an organization's tables in its dashboards' SQL", () => {
  const sum = (table: string) => asJsonRows(`SELECT sum(n)::int AS total, count(*)::int AS rows FROM ${table}`);
  const refusal = (scope: TenantScope, text: string) => runReadOnly(scope, text, [], { timeZone: "UTC" }).then(() => null, (e: unknown) => e as QueryError);

  it("resolves by its stable name for its organization, under the location policy; another organization's guess answers as any unknown name", async () => {
    const { system } = await getDb();
    const [location] = await system.query<{ id: string }>("SELECT id FROM locations WHERE org_id = 'org_acme' ORDER BY id LIMIT 1");
    const table = uniqueName("spend");
    await loadTable(
      acme,
      { table, mode: "create", onBadRow: "fail", locationColumn: { name: "store", by: "id" }, columns: [{ name: "store", type: "text", from: 0 }, { name: "n", type: "integer", from: 1 }] },
      source(["store", "n"], [[location.id, "5"], ["loc_elsewhere", "7"]]),
    );
    expect(await runReadOnly(acme, sum(table), [], { timeZone: "UTC" })).toEqual([{ total: 12, rows: 2 }]);
    expect(await runReadOnly({ orgId: acme.orgId, locationIds: [location.id] }, sum(table), [], { timeZone: "UTC" })).toEqual([{ total: 5, rows: 1 }]);

    const guessed = await refusal(globex, sum(table));
    const unknown = await refusal(globex, sum("no_such_table"));
    expect(guessed).toBeInstanceOf(QueryError);
    expect(guessed!.message.replace(table, "<name>")).toBe(unknown!.message.replace("no_such_table", "<name>"));
    // Its schema named outright is refused as any other schema is.
    const qualified = await refusal(globex, sum(qualifiedTable(acme.orgId, table)));
    const otherSchema = await refusal(globex, sum(`"quarry_data_0000000000000000"."${table}"`));
    expect(qualified!.message.replace(qualifiedTable(acme.orgId, table).replaceAll('"', ""), "<name>")).toBe(otherSchema!.message.replace(`quarry_data_0000000000000000.${table}`, "<name>"));
  });
});

describe("the audit log of loads and drops", () => {
  const admin: Principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin", locationIds: null, via: "session" };
  const events = (table: string) =>
    withTenant(acme, (tx) =>
      tx.$queryRawUnsafe<{ action: string; actor_kind: string; actor_id: string; actor_name: string | null; before: Record<string, unknown> | null; after: Record<string, unknown> | null }[]>(
        "SELECT action, actor_kind, actor_id, actor_name, before, after FROM audit_events WHERE target_id = $1 ORDER BY occurred_at, id",
        table,
      ),
    );

  it("records a committed load and a drop in their own transactions, and nothing for a load that rolled back", async () => {
    const table = uniqueName("audited");
    const request = (mode: LoadRequest["mode"]): LoadRequest => ({ table, mode, onBadRow: "fail", actor: admin, columns: [{ name: "n", type: "integer", from: 0 }] });
    await loadTable(acme, request("create"), source(["n"], [["1"], ["2"]]));
    await expect(loadTable(acme, request("append"), source(["n"], [["3"], ["x"]]))).rejects.toBeInstanceOf(BadValue);
    await loadTable(acme, { ...request("append"), actor: { system: "pull:pul_test" } }, source(["n"], [["4"]]));
    await deleteTable(acme, table, { force: true, actor: admin });
    const rows = await events(table);
    expect(rows.map((r) => [r.action, r.actor_kind, r.actor_id])).toEqual([
      ["data_table.load", "user", "usr_acme_admin"],
      ["data_table.load", "system", "pull:pul_test"],
      ["data_table.delete", "user", "usr_acme_admin"],
    ]);
    expect(rows[0].actor_name).toBeTruthy();
    expect(rows[0].after).toMatchObject({ mode: "create", rowsLoaded: 2, rowCount: 2, columns: [{ name: "n", type: "integer" }] });
    expect(rows[1].after).toMatchObject({ mode: "append", rowsLoaded: 1, rowCount: 3 });
    expect(rows[2].before).toMatchObject({ name: table, rowCount: 3, forced: true });
    // Another organization sees none of them.
    expect(await withTenant(globex, (tx) => tx.$queryRawUnsafe<unknown[]>("SELECT 1 FROM audit_events WHERE target_id = $1", table))).toEqual([]);
  });
});
