import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { PutObjectCommand, S3Client } from "@aws-sdk/client-s3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { withTenant, type TenantScope } from "@/lib/db/tenant";
import { qualifiedTable } from "@/lib/data/storage";
import { closeQueue, getQueue } from "@/lib/job-queue";
import { manualClock } from "@/lib/notifications/clock";
import { drainPullQueue, handlePullRun } from "@/lib/data/pipes/jobs";
import { s3ClientConfig } from "@/lib/storage/s3";
import { call, tokenFor } from "@/test/helpers";
import { startLocalS3, type LocalS3 } from "@/test/support/s3-server";
import * as collection from "./route";
import * as one from "./[id]/route";
import * as runs from "./[id]/runs/route";

// Loopback is reachable only through the explicit allow-list webhooks' tests use; everything else internal is refused.
process.env.NOTIFICATIONS_CONFIG = JSON.stringify({ url_allow_list: ["127.0.0.1"], in_process_worker: false });

const acme: TenantScope = { orgId: "org_acme" };
/** The PostgreSQL test server (it may create databases): the source a pull reads, whichever engine Quarry runs on. */
const SERVER = process.env.QUARRY_TEST_DATABASE_URL ?? "postgres://quarry:quarry@127.0.0.1:55432/quarry";
const sourceDb = `quarry_pull_source_${crypto.randomBytes(5).toString("hex")}`;
const PASSWORD = new URL(SERVER).password;
const sourceUrl = (() => {
  const url = new URL(SERVER);
  url.pathname = `/${sourceDb}`;
  return url.toString();
})();

let admin = "";
let globex = "";
let source: pg.Client;
let s3: LocalS3;

async function onServer(sql: string) {
  const client = new pg.Client({ connectionString: SERVER });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const countOf = async (table: string) =>
  (await withTenant(acme, (tx) => tx.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${qualifiedTable(acme.orgId, table)}`)))[0].n;
const runsOf = async (id: string, token = admin) => (await call(runs.GET, "GET", { token, params: { id } })).json.items as Record<string, unknown>[];

beforeAll(async () => {
  [admin, globex] = await Promise.all([tokenFor("acme", "admin"), tokenFor("globex", "admin")]);
  await onServer(`CREATE DATABASE ${sourceDb}`);
  source = new pg.Client({ connectionString: sourceUrl });
  await source.connect();
  await source.query(`CREATE TABLE events (id integer PRIMARY KEY, at timestamptz NOT NULL, amount numeric(10,2), ok boolean, note text)`);
  await source.query(`INSERT INTO events VALUES (1, '2026-01-01 10:00+00', 10.50, true, 'first'), (2, '2026-01-02 10:00+00', 20, false, NULL), (3, '2026-01-03 10:00+00', 30.25, true, 'a, "quoted" note')`);
  s3 = await startLocalS3("quarry-pulls");
});

afterAll(async () => {
  await source?.end();
  await onServer(`DROP DATABASE IF EXISTS ${sourceDb} WITH (FORCE)`).catch(() => undefined);
  await s3?.close();
  await closeQueue();
});

describe("pulls: sources and what is shown of them", () => {
  it("refuses sources on internal addresses, by the webhooks' outbound rules", async () => {
    const table = "refused";
    const refused = [
      { kind: "postgres", url: "postgres://u:p@10.1.2.3:5432/db", query: "SELECT 1" },
      { kind: "postgres", url: "postgres://u:p@localhost/db", query: "SELECT 1" },
      { kind: "https", url: "https://169.254.169.254/latest/meta-data", format: "csv" },
      { kind: "https", url: "http://example.com/data.csv", format: "csv" },
      { kind: "s3", bucket: "b", key: "k.csv", endpoint_url: "http://metadata.internal:9000", format: "csv" },
    ];
    for (const bad of refused) {
      const res = await call(collection.POST, "POST", { token: admin, body: { name: `refused ${bad.kind}`, table, mode: "append", source: bad } });
      expect(res.status, JSON.stringify(bad)).toBe(422);
      expect(JSON.stringify(res.json.detail)).toMatch(/internal|private|reserved|https/i);
    }
    expect((await call(collection.GET, "GET", { token: admin })).json.items).toEqual([]);
    // A run loads with the whole organization's scope: a location-limited admin manages no pull.
    const scoped = await tokenFor("acme", "admin", { locationIds: ["loc_acme_nyc"] });
    expect((await call(collection.GET, "GET", { token: scoped })).status).toBe(403);
  });

  it("never answers a connection URL, a URL or a key, and stores them sealed; another organization sees nothing", async () => {
    const secretUrl = `https://127.0.0.1/export.csv?token=tok-${crypto.randomBytes(8).toString("hex")}`;
    const created = await call(collection.POST, "POST", {
      token: admin,
      body: { name: "Exports", table: "exports", mode: "replace", cron: "0 6 * * *", source: { kind: "https", url: secretUrl, authorization: "Bearer sk-very-secret", format: "csv" } },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json.source).toEqual({ kind: "https", host: "127.0.0.1", format: "csv" });
    const pg1 = await call(collection.POST, "POST", {
      token: admin,
      body: { name: "Warehouse", table: "wh", mode: "append", source: { kind: "postgres", url: sourceUrl, query: "SELECT * FROM events", cursor_column: "id" } },
    });
    expect(pg1.status, pg1.text).toBe(201);
    expect(pg1.json.source).toMatchObject({ kind: "postgres", host: "127.0.0.1", database: sourceDb });
    const id = created.json.id as string;
    const answers = [
      created.text,
      pg1.text,
      (await call(collection.GET, "GET", { token: admin })).text,
      (await call(one.GET, "GET", { token: admin, params: { id } })).text,
      (await call(one.PATCH, "PATCH", { token: admin, params: { id }, body: { cron: "30 6 * * 1" } })).text,
      (await call(runs.GET, "GET", { token: admin, params: { id } })).text,
    ];
    for (const text of answers) {
      expect(text).not.toContain("token=tok-");
      expect(text).not.toContain("sk-very-secret");
      expect(text).not.toContain(`:${PASSWORD}@`);
    }
    const { system } = await getDb();
    const stored = await system.query<{ secrets_enc: string; source: unknown }>("SELECT secrets_enc, source FROM data_pulls WHERE id = $1", [id]);
    expect(JSON.stringify(stored)).not.toContain("token=tok-");
    expect(JSON.stringify(stored)).not.toContain("sk-very-secret");

    expect((await call(collection.GET, "GET", { token: globex })).json.items).toEqual([]);
    expect((await call(one.GET, "GET", { token: globex, params: { id } })).status).toBe(404);
    expect((await call(one.PATCH, "PATCH", { token: globex, params: { id }, body: { paused: true } })).status).toBe(404);
    expect((await call(runs.POST, "POST", { token: globex, params: { id } })).status).toBe(404);
    expect((await call(one.DELETE, "DELETE", { token: globex, params: { id } })).status).toBe(404);
    expect((await call(one.DELETE, "DELETE", { token: admin, params: { id } })).status).toBe(204);
    expect((await call(one.DELETE, "DELETE", { token: admin, params: { id: pg1.json.id } })).status).toBe(204);
  });

  it("refuses a cron expression that is not one, and an incremental replace", async () => {
    const base = { name: "Bad", table: "bad", source: { kind: "postgres", url: sourceUrl, query: "SELECT * FROM events", cursor_column: "id" } };
    expect((await call(collection.POST, "POST", { token: admin, body: { ...base, mode: "append", cron: "every day" } })).status).toBe(422);
    expect((await call(collection.POST, "POST", { token: admin, body: { ...base, mode: "replace" } })).status).toBe(422);
  });
});

describe("scheduled pull from PostgreSQL", () => {
  it("loads incrementally by its cursor column on its cron, read-only", async () => {
    const table = `events_${crypto.randomBytes(3).toString("hex")}`;
    const created = await call(collection.POST, "POST", {
      token: admin,
      body: { name: "Events", table, mode: "append", cron: "*/5 * * * *", source: { kind: "postgres", url: sourceUrl, query: "SELECT id, at, amount, ok, note FROM events", cursor_column: "id" } },
    });
    expect(created.status, created.text).toBe(201);
    const id = created.json.id as string;
    // Nothing is due before the next five-minute mark after it was made.
    const clock = manualClock(new Date());
    expect(await drainPullQueue(clock)).toBe(0);
    clock.advance(5 * 60_000 + 1_000);
    expect(await drainPullQueue(clock)).toBe(1);
    let history = await runsOf(id);
    expect(history[0], JSON.stringify(history[0])).toMatchObject({ trigger: "cron", status: "succeeded", rows_loaded: 3, cursor_from: null, cursor_to: "3", attempts: 1 });
    expect(await countOf(table)).toBe(3);
    const [loaded] = await withTenant(acme, (tx) => tx.$queryRawUnsafe<{ amount: string; ok: boolean; at: Date; note: string }[]>(`SELECT amount::text, ok, at, note FROM ${qualifiedTable(acme.orgId, table)} WHERE id = 3`));
    expect(loaded).toMatchObject({ amount: "30.25", ok: true, note: 'a, "quoted" note' });
    expect(loaded.at.toISOString()).toBe("2026-01-03T10:00:00.000Z");

    await source.query(`INSERT INTO events VALUES (4, '2026-01-04 10:00+00', 40, true, 'four'), (5, '2026-01-05 10:00+00', 50, false, 'five')`);
    clock.advance(5 * 60_000);
    expect(await drainPullQueue(clock)).toBe(1);
    history = await runsOf(id);
    expect(history[0]).toMatchObject({ status: "succeeded", rows_loaded: 2, cursor_from: "3", cursor_to: "5" });
    expect(await countOf(table)).toBe(5);

    // Nothing new: a run that loads nothing and keeps its place.
    clock.advance(5 * 60_000);
    expect(await drainPullQueue(clock)).toBe(1);
    expect((await runsOf(id))[0]).toMatchObject({ status: "succeeded", rows_loaded: 0, cursor_to: "5" });
    expect((await call(one.GET, "GET", { token: admin, params: { id } })).json).toMatchObject({ cursor_value: "5", time_zone: expect.any(String) });
    expect(await countOf(table)).toBe(5);
  });

  it("runs the source query read-only and within its time limit; a run failed for good tells the admins", async () => {
    const table = `slow_${crypto.randomBytes(3).toString("hex")}`;
    const writer = await call(collection.POST, "POST", {
      token: admin,
      body: { name: "Writer", table, mode: "append", source: { kind: "postgres", url: sourceUrl, query: "SELECT * FROM events FOR UPDATE" } },
    });
    const slow = await call(collection.POST, "POST", {
      token: admin,
      body: { name: "Slow", table, mode: "append", source: { kind: "postgres", url: sourceUrl, query: "SELECT 1 AS one FROM pg_sleep(5)" } },
    });
    const queue = await getQueue(false);
    const clock = manualClock(new Date());
    const limits = { statementTimeoutMs: 300, connectTimeoutMs: 5_000, runTimeoutMs: 30_000 };
    for (const [pull, expected] of [[writer.json.id, /read-only/], [slow.json.id, /time limit/]] as const) {
      const run = await call(runs.POST, "POST", { token: admin, params: { id: pull } });
      expect(run.status, run.text).toBe(202);
      for (let attempt = 1; attempt <= 3; attempt++) await handlePullRun({ clock, queue }, { orgId: acme.orgId, runId: run.json.id }, limits);
      const [last] = await runsOf(pull);
      expect(last).toMatchObject({ status: "failed", attempts: 3, rows_loaded: 0 });
      expect(String(last.error)).toMatch(expected);
    }
    const deliveries = await withTenant(acme, (tx) => tx.notificationDelivery.findMany({ where: { pullRunId: { not: null } } }));
    expect(deliveries.some((d) => d.channel === "in_app" && d.recipient === "usr_acme_admin" && d.status === "pending" && d.subject.includes('"Writer" failed'))).toBe(true);
    // The table never came to be: nothing was loaded.
    expect(await withTenant(acme, (tx) => tx.$queryRawUnsafe<unknown[]>("SELECT 1 FROM org_tables WHERE name = $1", table))).toEqual([]);
  });
});

describe("pull from S3 (s3rver)", () => {
  it("replaces a table with a CSV object, run now, and again when the object changes", async () => {
    const client = new S3Client(s3ClientConfig({ region: "us-east-1", endpoint_url: s3.endpoint, access_key_id: s3.accessKeyId, secret_access_key: s3.secretAccessKey }));
    const put = (body: string | Buffer, key = "exports/sales.csv") => client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: body }));
    await put("region,units,revenue\nnorth,3,10.5\nsouth,4,20\n");
    const table = `s3_sales_${crypto.randomBytes(3).toString("hex")}`;
    const created = await call(collection.POST, "POST", {
      token: admin,
      body: {
        name: "S3 sales",
        table,
        mode: "replace",
        source: { kind: "s3", bucket: s3.bucket, key: "exports/sales.csv", endpoint_url: s3.endpoint, access_key_id: s3.accessKeyId, secret_access_key: s3.secretAccessKey, format: "csv" },
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.text).not.toContain(s3.secretAccessKey === "S3RVER" ? "secret_access_key" : s3.secretAccessKey);
    const id = created.json.id as string;
    const clock = manualClock(new Date());
    expect((await call(runs.POST, "POST", { token: admin, params: { id } })).status).toBe(202);
    expect(await drainPullQueue(clock)).toBe(1);
    expect((await runsOf(id))[0]).toMatchObject({ trigger: "manual", status: "succeeded", rows_loaded: 2 });
    expect(await countOf(table)).toBe(2);

    await put("region,units,revenue\nnorth,3,10.5\nsouth,4,20\neast,5,30\n");
    await call(runs.POST, "POST", { token: admin, params: { id } });
    expect(await drainPullQueue(clock)).toBe(1);
    expect(await countOf(table)).toBe(3);
    const types = await withTenant(acme, (tx) => tx.$queryRawUnsafe<{ columns: { name: string; type: string }[] }[]>("SELECT columns FROM org_tables WHERE name = $1", table));
    expect(types[0].columns).toEqual([{ name: "region", type: "text" }, { name: "units", type: "integer" }, { name: "revenue", type: "numeric" }]);

    // A Parquet object of the same kind.
    await put(fs.readFileSync(path.join(process.cwd(), "lib/data/formats/fixtures/sales.parquet")), "exports/sales.parquet");
    const parquet = await call(collection.POST, "POST", {
      token: admin,
      body: { name: "S3 parquet", table: `${table}_pq`, mode: "replace", source: { kind: "s3", bucket: s3.bucket, key: "exports/sales.parquet", endpoint_url: s3.endpoint, access_key_id: s3.accessKeyId, secret_access_key: s3.secretAccessKey, format: "parquet" } },
    });
    await call(runs.POST, "POST", { token: admin, params: { id: parquet.json.id } });
    expect(await drainPullQueue(clock)).toBe(1);
    expect((await runsOf(parquet.json.id))[0], JSON.stringify(await runsOf(parquet.json.id))).toMatchObject({ status: "succeeded" });
    expect(await countOf(`${table}_pq`)).toBeGreaterThan(0);
    client.destroy();
  });
});
