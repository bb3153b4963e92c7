import crypto from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgresSource, parsePostgresUrl, type PostgresRowSource } from "./postgres";

// Loopback is reachable only through the explicit allow-list webhooks' tests use.
process.env.NOTIFICATIONS_CONFIG = JSON.stringify({ url_allow_list: ["127.0.0.1"], in_process_worker: false });

/** The PostgreSQL test server (it may create databases): the organization's database a pull reads. */
const SERVER = process.env.QUARRY_TEST_DATABASE_URL ?? "postgres://quarry:quarry@127.0.0.1:55432/quarry";
const database = `quarry_source_${crypto.randomBytes(5).toString("hex")}`;
const url = (() => {
  const u = new URL(SERVER);
  u.pathname = `/${database}`;
  return u.toString();
})();
const LIMITS = { statementTimeoutMs: 5_000, connectTimeoutMs: 5_000 };

async function onServer(sql: string, target = SERVER) {
  const client = new pg.Client({ connectionString: target });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

async function drain(source: PostgresRowSource): Promise<(string | null)[][]> {
  const rows: (string | null)[][] = [];
  for await (const row of source.rows) rows.push(row);
  return rows;
}

beforeAll(async () => {
  await onServer(`CREATE DATABASE ${database}`);
  await onServer(
    `CREATE TABLE items (id bigint PRIMARY KEY, at timestamptz, price numeric, ok boolean, label text, day date);
     INSERT INTO items SELECT g, '2026-01-01 00:00+00'::timestamptz + g * interval '1 hour', g * 1.5, g % 2 = 0, 'item ' || g, '2026-01-01'::date + g FROM generate_series(1, 4500) g;`,
    url,
  );
});

afterAll(async () => {
  await onServer(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
});

describe("a PostgreSQL source", () => {
  it("reads every row in batches as the server writes it, with the source's types", async () => {
    const source = await openPostgresSource({ url, query: "SELECT id, at, price, ok, label, day FROM items" }, null, LIMITS);
    expect(source.header).toEqual(["id", "at", "price", "ok", "label", "day"]);
    expect(source.types).toEqual(["integer", "timestamptz", "numeric", "boolean", "text", "date"]);
    const rows = await drain(source);
    expect(rows).toHaveLength(4500);
    expect(rows.find((r) => r[0] === "2")).toEqual(["2", "2026-01-01 02:00:00+00", "3.0", "t", "item 2", "2026-01-03"]);
  });

  it("reads only rows after the cursor, in its order, and says the last one", async () => {
    const source = await openPostgresSource({ url, query: "SELECT * FROM items", cursorColumn: "id" }, "4498", LIMITS);
    expect((await drain(source)).map((r) => r[0])).toEqual(["4499", "4500"]);
    expect(source.cursorValue()).toBe("4500");
    const none = await openPostgresSource({ url, query: "SELECT * FROM items", cursorColumn: "id" }, "4500", LIMITS);
    expect(await drain(none)).toEqual([]);
    expect(none.cursorValue()).toBe("4500");
    await expect(openPostgresSource({ url, query: "SELECT label FROM items", cursorColumn: "id" }, null, LIMITS)).rejects.toThrow(/column quarry_source.id does not exist/);
  });

  it("runs read-only, one statement, within its time limit", async () => {
    await expect(openPostgresSource({ url, query: "SELECT * FROM items FOR UPDATE" }, null, LIMITS)).rejects.toThrow(/read-only/);
    // A second statement cannot ride along: not a write, not an end of the read-only transaction.
    await expect(openPostgresSource({ url, query: "SELECT 1) AS x; COMMIT; DELETE FROM items; SELECT * FROM (SELECT 1" }, null, LIMITS)).rejects.toThrow();
    expect((await onServer("SELECT count(*)::int AS n FROM items", url)).rows[0].n).toBe(4500);
    const started = performance.now();
    await expect(openPostgresSource({ url, query: "SELECT pg_sleep(30)" }, null, { ...LIMITS, statementTimeoutMs: 200 })).rejects.toThrow(/time limit/);
    // Bounded by the statement timeout, far below the 30 s the query asks for.
    expect(performance.now() - started).toBeLessThan(15_000);
  });

  it("refuses internal hosts that are not allow-listed, before connecting", async () => {
    for (const host of ["10.0.0.7", "localhost", "169.254.169.254", "[::1]", "db.internal"]) {
      await expect(openPostgresSource({ url: `postgres://u:p@${host}:5432/db`, query: "SELECT 1" }, null, LIMITS)).rejects.toThrow(/internal|private|reserved/);
    }
  });

  it("parses connection URLs and refuses what is not one", () => {
    expect(parsePostgresUrl("postgresql://a%40b:p%3Aw@db.example.com:6543/sales?sslmode=verify-full")).toEqual({ host: "db.example.com", port: 6543, user: "a@b", password: "p:w", database: "sales", ssl: "verify-full" });
    expect(() => parsePostgresUrl("mysql://x@y/z")).toThrow(/postgres:\/\//);
    expect(() => parsePostgresUrl("postgres://x@y")).toThrow(/no database/);
  });
});
