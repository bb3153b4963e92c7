// Indexing as a job (issue 28 §1): uploads queue it, pg-boss runs it (drained here as a worker would),
// failures are retried with back-off and given up with the reason, an organization runs a limited
// number at a time, and a job repeated for a request that is done changes nothing.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/lib/db/client";
import { INDEX_QUEUE, drainIndexQueue, indexJobPolicy, indexQueue, sendIndexJob, sweepIndexRequests } from "@/lib/documents/indexing/index-jobs";
import { getEmbedder } from "@/lib/embeddings";
import { UpstreamFailed } from "@/lib/errors";
import { closeQueue } from "@/lib/job-queue";
import { resetRateLimits } from "@/lib/security/rate-limit";
import { call, tokenFor } from "@/test/helpers";
import * as indexRoute from "./[id]/index/route";
import * as one from "./[id]/route";
import * as upload from "./[id]/upload/route";
import * as collection from "./route";
import * as settings from "@/app/api/v1/organization/settings/route";

process.env.NOTIFICATIONS_CONFIG = JSON.stringify({ in_process_worker: false });

let admin: string, analyst: string, globex: string;
const defaults = { ...indexJobPolicy };
let failing = false;
beforeAll(async () => {
  [admin, analyst, globex] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst"), tokenFor("globex", "admin")]);
  // The database and the queue opened here, under the hook's longer limit, not in the first test's.
  await indexQueue();
  // The offline embedder, made to fail on demand like a provider that is down.
  const embedder = getEmbedder();
  const embed = embedder.embedDocuments.bind(embedder);
  embedder.embedDocuments = async (texts, options) => {
    if (failing) throw new UpstreamFailed("embedding provider local failed: 503 service unavailable");
    return embed(texts, options);
  };
});
afterEach(async () => {
  resetRateLimits();
  Object.assign(indexJobPolicy, defaults);
  failing = false;
  // What a test left queued (a deferred or retried job, or all of a test cut at its time limit)
  // must not be run, and counted, by the next test's drain.
  await (await indexQueue()).purgeQueue(INDEX_QUEUE);
});
afterAll(() => closeQueue());

async function createAndUpload(filename: string, text: string, query = ""): Promise<{ id: string; record: Record<string, unknown> }> {
  const created = await call(collection.POST, "POST", "/api/v1/documents", { token: admin, body: { filename } });
  expect(created.status, created.text).toBe(201);
  const id = created.json.id as string;
  const res = await call(upload.POST, "POST", `/api/v1/documents/${id}/upload${query}`, {
    token: admin,
    rawBody: new Uint8Array(Buffer.from(text)),
    params: { id },
    headers: { "content-type": "text/plain" },
  });
  expect(res.status, res.text).toBe(200);
  return { id, record: res.json };
}
const status = (id: string, token = admin) => call(indexRoute.GET, "GET", `/api/v1/documents/${id}/index`, { token, params: { id } });
const record = (id: string) => call(one.GET, "GET", `/api/v1/documents/${id}`, { token: admin, params: { id } });
const chunkRows = async (id: string) => {
  const { system } = await getDb();
  return system.query<{ generation: number; n: number }>("SELECT generation, count(*)::int AS n FROM document_chunks WHERE document_id = $1 GROUP BY generation", [id]);
};
const words = (n: number) => Array.from({ length: n }, (_, i) => ["ledger", "harbour", "invoice", "timber", "freight"][i % 5]).join(" ");

describe("indexing as a job", () => {
  it("an upload queues its indexing; a worker runs it; the status endpoint follows it", async () => {
    const { id, record: uploaded } = await createAndUpload("tides.txt", `Tide tables for the northern estuary. ${words(900)}`);
    expect(uploaded).toMatchObject({ status: "uploaded", index_job: { state: "queued", attempts: 0, reason: null } });
    const queued = await status(id);
    expect(queued.status, queued.text).toBe(200);
    expect(queued.json).toMatchObject({ document_id: id, state: "queued", status: "uploaded", progress: { done: 0, total: 0 }, attempts: 0, links: { status: `/api/v1/documents/${id}/index` } });
    // Any role of the organization may follow it.
    expect((await status(id, analyst)).status).toBe(200);

    expect((await drainIndexQueue()).done).toBe(1);
    const done = await status(id);
    expect(done.json).toMatchObject({ state: "done", status: "indexed", attempts: 1, reason: null });
    expect(done.json.chunk_count).toBeGreaterThan(1);
    expect(done.json.progress).toEqual({ done: done.json.chunk_count, total: done.json.chunk_count });
    expect((await record(id)).json).toMatchObject({ status: "indexed", index_job: { state: "done", attempts: 1 } });
  });

  it("?index=false stores the file only", async () => {
    const { id, record: uploaded } = await createAndUpload("later.txt", "Stored now, indexed later.", "?index=false");
    expect(uploaded).toMatchObject({ status: "uploaded", index_job: null });
    expect((await status(id)).json).toMatchObject({ state: "none", status: "uploaded" });
    expect((await drainIndexQueue()).done).toBe(0);
  });

  it("an organization may turn indexing on upload off; ?index=true still queues one file", async () => {
    const put = (body: Record<string, unknown>) => call(settings.PUT, "PUT", "/api/v1/organization/settings", { token: admin, body });
    const off = await put({ image_origins: [], index_on_upload: false });
    expect(off.status, off.text).toBe(200);
    expect(off.json).toMatchObject({ index_on_upload: false });
    // Omitted: kept.
    expect((await put({ image_origins: [] })).json).toMatchObject({ index_on_upload: false });
    try {
      expect((await createAndUpload("quiet.txt", "Not indexed on upload.")).record).toMatchObject({ index_job: null });
      expect((await createAndUpload("asked.txt", "Indexed on request.", "?index=true")).record).toMatchObject({ index_job: { state: "queued" } });
      // globex keeps its default.
      const created = await call(collection.POST, "POST", "/api/v1/documents", { token: globex, body: { filename: "g.txt" } });
      const gid = created.json.id as string;
      const res = await call(upload.POST, "POST", `/api/v1/documents/${gid}/upload`, { token: globex, rawBody: new Uint8Array(Buffer.from("Globex text.")), params: { id: gid }, headers: { "content-type": "text/plain" } });
      expect(res.json.index_job).toMatchObject({ state: "queued" });
    } finally {
      expect((await put({ image_origins: [], index_on_upload: true })).json).toMatchObject({ index_on_upload: true });
    }
    await drainIndexQueue();
  });

  it("Prefer: respond-async answers 202 with the status and where to follow it", async () => {
    const { id } = await createAndUpload("async.txt", `Quarterly freight summary. ${words(300)}`, "?index=false");
    const res = await call(indexRoute.POST, "POST", `/api/v1/documents/${id}/index`, { token: admin, params: { id }, headers: { prefer: "respond-async" } });
    expect(res.status, res.text).toBe(202);
    expect(res.headers.get("location")).toBe(`/api/v1/documents/${id}/index`);
    expect(res.headers.get("preference-applied")).toBe("respond-async");
    expect(res.json).toMatchObject({ document_id: id, state: "queued" });
    await drainIndexQueue();
    expect((await status(id)).json).toMatchObject({ state: "done", status: "indexed" });
  });

  it("POST …/index still answers the finished record with its chunk count", async () => {
    const { id } = await createAndUpload("sync.txt", `Timber yard inventory. ${words(700)}`);
    const res = await call(indexRoute.POST, "POST", `/api/v1/documents/${id}/index`, { token: admin, params: { id } });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ status: "indexed", index_job: { state: "done" } });
    expect(res.json.chunk_count).toBeGreaterThan(0);
    // The upload's job finds its request answered by that run: nothing is indexed twice.
    const generation = res.json.index_generation;
    expect(await drainIndexQueue()).toMatchObject({ done: 0 });
    expect((await record(id)).json.index_generation).toBe(generation);
  });

  it("retries a failing provider with back-off, then gives up with the reason (dead letter); a new request succeeds", async () => {
    // Back-off long enough that "not due yet" below holds on a loaded machine too.
    Object.assign(indexJobPolicy, { maxAttempts: 3, backoffBaseMs: 1_000 });
    failing = true;
    const { id } = await createAndUpload("flaky.txt", `Harbour dues schedule. ${words(400)}`);
    const attempts: string[] = [];
    for (let i = 0; i < 3; i++) {
      const outcome = await drainIndexQueue();
      attempts.push(Object.entries(outcome).filter(([, n]) => n > 0).map(([k]) => k).join());
      const s = (await status(id)).json;
      if (i < 2) {
        expect(s).toMatchObject({ state: "queued", attempts: i + 1 });
        expect(s.reason).toMatch(new RegExp(`Attempt ${i + 1} of 3 failed: embedding provider local failed`));
        // Back-off: 1 s after the first failure, 2 s after the second.
        const wait = new Date(s.next_attempt_at).getTime() - Date.now();
        expect(wait).toBeLessThanOrEqual(1_000 * 2 ** i + 50);
        expect((await drainIndexQueue()).retrying).toBe(0); // not due yet
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait) + 1100));
      }
    }
    expect(attempts).toEqual(["retrying", "retrying", "failed"]);
    const dead = (await status(id)).json;
    expect(dead).toMatchObject({ state: "failed", status: "failed", attempts: 3 });
    expect(dead.reason).toMatch(/embedding provider local failed: 503.*gave up after 3 attempts/);
    expect(await chunkRows(id)).toEqual([]);

    // The retry button: a new request.
    failing = false;
    const again = await call(indexRoute.POST, "POST", `/api/v1/documents/${id}/index`, { token: admin, params: { id } });
    expect(again.status, again.text).toBe(200);
    expect((await status(id)).json).toMatchObject({ state: "done", status: "indexed", attempts: 1, reason: null });
  }, 60_000);

  it("gives up at once on a file without text, with the reason", async () => {
    const { id } = await createAndUpload("blank.txt", "   \n\n   \t  ");
    expect((await drainIndexQueue()).failed).toBe(1);
    const s = (await status(id)).json;
    expect(s).toMatchObject({ state: "failed", status: "failed", attempts: 1 });
    expect(s.reason).toMatch(/no text/i);
  });

  it("runs at most the organization's limit of jobs at a time; the others wait", async () => {
    Object.assign(indexJobPolicy, { perOrgConcurrency: 1, busyDelayMs: 300 });
    const { system } = await getDb();
    const { id: busy } = await createAndUpload("busy.txt", "A document some worker is indexing.", "?index=false");
    const { id } = await createAndUpload("waiting.txt", `Waiting its turn. ${words(200)}`);
    // globex is not held back by acme's run.
    const created = await call(collection.POST, "POST", "/api/v1/documents", { token: globex, body: { filename: "globex.txt" } });
    const globexId = created.json.id as string;
    await call(upload.POST, "POST", `/api/v1/documents/${globexId}/upload`, { token: globex, rawBody: new Uint8Array(Buffer.from(`Globex notes. ${words(100)}`)), params: { id: globexId }, headers: { "content-type": "text/plain" } });

    // A run of another worker, alive: its heartbeat fresh when the queue is read (set earlier, a loaded
    // machine's uploads could outlast the lease and leave it for dead).
    await system.query("UPDATE documents SET status = 'indexing', index_job_id = 'other-worker', index_job_started_at = now(), index_heartbeat_at = now() WHERE id = $1", [busy]);
    const drained = await drainIndexQueue();
    // globex's job ran; acme's waited (deferred again each time it fell due while the drain went on).
    expect(drained.done).toBe(1);
    expect(drained.deferred).toBeGreaterThanOrEqual(1);
    expect((await status(globexId, globex)).json.state).toBe("done");
    const waiting = (await status(id)).json;
    expect(waiting).toMatchObject({ state: "queued", attempts: 0 });
    expect(waiting.reason).toMatch(/waiting: 1 other document is being indexed in this organization \(at most 1 at a time\)/);

    await system.query("UPDATE documents SET status = 'uploaded', index_job_id = NULL, index_job_started_at = NULL, index_heartbeat_at = NULL WHERE id = $1", [busy]);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    expect((await drainIndexQueue()).done).toBe(1);
    expect((await status(id)).json).toMatchObject({ state: "done", attempts: 1 });
  }, 30_000);

  it("a job repeated for a request that is done changes nothing; the sweep re-sends a lost job once", async () => {
    const { id } = await createAndUpload("twice.txt", `Invoice archive. ${words(600)}`);
    const { system } = await getDb();
    const [{ index_request_id: requestId }] = await system.query<{ index_request_id: string }>("SELECT index_request_id FROM documents WHERE id = $1", [id]);
    // The same job twice (pg-boss handing a job out again after a lost worker, or the sweep): one run.
    await sendIndexJob({ orgId: "org_acme", documentId: id, requestId });
    expect(await drainIndexQueue()).toMatchObject({ done: 1, nothing: 1 });
    const after = (await record(id)).json;
    expect(await chunkRows(id)).toEqual([{ generation: after.index_generation, n: after.chunk_count }]);

    // A request committed whose job never reached the queue (a crash in between): the sweep sends it.
    const { id: lost } = await createAndUpload("lost.txt", `Freight manifest. ${words(300)}`, "?index=false");
    await system.query("UPDATE documents SET index_request_id = 'idx_lost', index_job_state = 'queued', index_requested_at = now() - interval '10 minutes' WHERE id = $1", [lost]);
    expect(await sweepIndexRequests()).toBe(1);
    expect((await drainIndexQueue()).done).toBe(1);
    expect((await status(lost)).json).toMatchObject({ state: "done", status: "indexed" });
    expect(await sweepIndexRequests()).toBe(0);
  });

  it("another organization sees nothing: 404 on the status and on a queued request", async () => {
    const { id } = await createAndUpload("acme-only.txt", "Acme's own words.", "?index=false");
    const res = await status(id, globex);
    expect(res.status).toBe(404);
    expect(res.text).not.toContain("acme");
    const queued = await call(indexRoute.POST, "POST", `/api/v1/documents/${id}/index`, { token: globex, params: { id }, headers: { prefer: "respond-async" } });
    expect(queued.status).toBe(404);
    expect((await status(id)).json.state).toBe("none");
    expect((await call(indexRoute.GET, "GET", "/api/v1/documents/doc_missing/index", { token: admin, params: { id: "doc_missing" } })).status).toBe(404);
  });
});
