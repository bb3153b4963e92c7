import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { withTenant, type TenantScope } from "@/lib/db/tenant";
import { loadTable } from "@/lib/data/load";
import { qualifiedTable } from "@/lib/data/storage";
import { checkRateLimit } from "@/lib/security/rate-limit";
import { ingestRows } from "@/lib/data/pipes-contract";
import { ingestQueue } from "@/lib/data/pipes/ingest";
import { call, tokenFor } from "@/test/helpers";
import * as rows from "./route";

const acme: TenantScope = { orgId: "org_acme" };
const table = `ingested_${randomBytes(4).toString("hex")}`;
let admin = "";
let globex = "";

const countOf = async (name = table) =>
  (await withTenant(acme, (tx) => tx.$queryRawUnsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM ${qualifiedTable(acme.orgId, name)}`)))[0].n;

const post = (body: string, options: { key?: string; type?: string; query?: string; token?: string; name?: string } = {}) =>
  call(rows.POST, "POST", `/api/v1/data/tables/${options.name ?? table}/rows${options.query ?? ""}`, {
    token: options.token ?? admin,
    params: { name: options.name ?? table },
    rawBody: body,
    headers: { "content-type": options.type ?? "text/csv", ...(options.key ? { "idempotency-key": options.key } : {}) },
  });

beforeAll(async () => {
  [admin, globex] = await Promise.all([tokenFor("acme", "admin"), tokenFor("globex", "admin")]);
  const header = ["order_id", "amount", "paid"];
  await loadTable(acme, { table, mode: "create", onBadRow: "fail", keyColumns: ["order_id"], columns: header.map((name, from) => ({ name, from, type: name === "paid" ? "boolean" : name === "amount" ? "numeric" : "integer" })) }, {
    header,
    rows: (async function* () {
      yield ["1", "10.00", "true"];
    })(),
  });
});

describe("POST /api/v1/data/tables/{name}/rows", () => {
  it("loads a batch once: a retry with its Idempotency-Key answers the first result and loads nothing", async () => {
    const key = `batch-${randomBytes(6).toString("hex")}`;
    const batch = "order_id,amount,paid\n2,20.50,false\n3,30,yes\n";
    const first = await post(batch, { key });
    expect(first.status, first.text).toBe(200);
    expect(first.json).toMatchObject({ table, mode: "append", rows_loaded: 2, rows_skipped: 0, idempotency_key: key, replayed: false, bytes: Buffer.byteLength(batch) });
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(await countOf()).toBe(3);

    const retried = await post(batch, { key });
    expect(retried.status, retried.text).toBe(200);
    expect(retried.json).toEqual({ ...first.json, replayed: true });
    expect(retried.headers.get("idempotent-replayed")).toBe("true");
    expect(await countOf()).toBe(3);

    // Sent twice at once: one loads, the other answers its result (the key is written with the rows).
    const key2 = `batch-${randomBytes(6).toString("hex")}`;
    const twin = "order_id,amount,paid\n4,4,t\n";
    const both = await Promise.all([post(twin, { key: key2 }), post(twin, { key: key2 })]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
    expect(both.map((r) => r.json.replayed).sort()).toEqual([false, true]);
    expect(await countOf()).toBe(4);

    const reused = await post("order_id,amount,paid\n99,1,t\n", { key });
    expect(reused.status).toBe(422);
    expect(JSON.stringify(reused.json.detail)).toContain("another batch");
    expect(await countOf()).toBe(4);
  });

  it("keeps nothing of a refused batch, so the same key may carry the corrected one", async () => {
    const key = `fix-${randomBytes(6).toString("hex")}`;
    const bad = await post("order_id,amount,paid\n10,1,t\n11,eleven,t\n", { key });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.json.detail)).toMatch(/Row 2.*amount.*eleven/);
    expect(await countOf()).toBe(4);
    const fixed = await post("order_id,amount,paid\n10,1,t\n11,11,t\n", { key });
    expect(fixed.status, fixed.text).toBe(200);
    expect(fixed.json.replayed).toBe(false);
    expect(await countOf()).toBe(6);
  });

  it("upserts NDJSON by the table's key and skips bad rows when asked", async () => {
    const body = ['{"order_id": 2, "amount": 22, "paid": true}', '{"order_id": 12, "amount": 12.5, "paid": false}', '{"order_id": 13, "amount": "n/a", "paid": true}'].join("\n");
    const res = await post(body, { type: "application/x-ndjson", query: "?mode=upsert&on_bad_row=skip" });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ mode: "upsert", rows_loaded: 2, rows_skipped: 1, idempotency_key: null });
    expect(res.json.skipped[0]).toMatchObject({ row: 3, column: "amount", value: "n/a" });
    expect(await countOf()).toBe(7);
    const [row] = await withTenant(acme, (tx) => tx.$queryRawUnsafe<{ amount: string }[]>(`SELECT amount::text FROM ${qualifiedTable(acme.orgId, table)} WHERE order_id = 2`));
    expect(row.amount).toBe("22");
  });

  it("answers clear errors: unknown format 415, unknown column 422, no such table 404, another organization 404, a bad key 422", async () => {
    expect((await post("a,b\n1,2\n", { type: "application/octet-stream" })).status).toBe(415);
    const unknown = await post("order_id,amount,paid,color\n20,1,t,red\n");
    expect(unknown.status).toBe(422);
    expect(JSON.stringify(unknown.json.detail)).toContain("color");
    expect((await post("order_id\n1\n", { name: "no_such_table" })).status).toBe(404);
    const other = await post("order_id,amount,paid\n30,1,t\n", { token: globex });
    expect(other.status).toBe(404);
    expect(other.json.detail).toContain("not found");
    expect((await post("order_id,amount,paid\n30,1,t\n", { key: "k".repeat(256) })).status).toBe(422);
    expect(await countOf()).toBe(7);
  });

  it("adds a new column when asked, its type inferred from the whole batch", async () => {
    const res = await post("order_id,amount,paid,units\n40,1,t,3\n41,2,f,4\n", { query: "?add_new_columns=true" });
    expect(res.status, res.text).toBe(200);
    const [row] = await withTenant(acme, (tx) => tx.$queryRawUnsafe<{ units: bigint }[]>(`SELECT units FROM ${qualifiedTable(acme.orgId, table)} WHERE order_id = 41`));
    expect(Number(row.units)).toBe(4);
  });

  it("lets a location-limited admin write only rows of its own locations (the table's policy decides)", async () => {
    const located = `located_${randomBytes(4).toString("hex")}`;
    const header = ["store", "units"];
    await loadTable(acme, { table: located, mode: "create", onBadRow: "fail", locationColumn: { name: "store", by: "id" }, columns: [{ name: "store", type: "text", from: 0 }, { name: "units", type: "integer", from: 1 }] }, {
      header,
      rows: (async function* () {
        yield ["loc_acme_sfo", "1"];
      })(),
    });
    const scoped = await tokenFor("acme", "admin", { locationIds: ["loc_acme_nyc"] });
    const own = await post("store,units\nloc_acme_nyc,2\n", { token: scoped, name: located });
    expect(own.status, own.text).toBe(200);
    const other = await post("store,units\nloc_acme_nyc,3\nloc_acme_sfo,4\n", { token: scoped, name: located });
    expect(other.status, other.text).toBe(403);
    expect(other.json.detail).toContain("outside yours");
    expect(await countOf(located)).toBe(2);
  });

  it("answers 503 with Retry-After when the organization's loads are queued too long, loading nothing", async () => {
    const before = await countOf();
    // Every slot this organization may hold, taken by loads that end only when this test says.
    let release = () => undefined as void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const queue = ingestQueue.get();
    const holders = Array.from({ length: queue.limits.perKey }, () => queue.run(acme.orgId, () => held));
    const res = await post("order_id,amount,paid\n60,1,t\n", { key: `queued-${randomBytes(4).toString("hex")}` });
    release();
    await Promise.all(holders);
    expect(res.status, res.text).toBe(503);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(res.json.detail).toContain("same Idempotency-Key");
    expect(await countOf()).toBe(before);
    // The batch waits the queue's whole deadline first: the test's own bound is that plus the usual one.
  }, ingestQueue.get().limits.deadlineMs + 30_000);

  it("answers 429 with Retry-After past the caller's rate limit, loading nothing", async () => {
    const before = await countOf();
    const limit = ingestRows.rateLimit!;
    const key = `post ${ingestRows.path} user org_acme:usr_acme_admin`;
    // The wrapper's own counter for this caller, filled to its limit.
    for (let i = 0; i < limit.limit; i++) await checkRateLimit(key, limit.limit, limit.windowSeconds);
    const res = await post("order_id,amount,paid\n50,1,t\n", { key: `limited-${randomBytes(4).toString("hex")}` });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(res.json.detail).toMatch(/retry/i);
    expect(await countOf()).toBe(before);
  });
});
