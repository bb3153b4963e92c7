import PDFDocument from "pdfkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { TimedOut } from "@/lib/errors";
import { call, tokenFor } from "@/test/helpers";
import { resetRateLimits } from "@/lib/security/rate-limit";
import { LOCAL_EMBEDDING_SETTINGS } from "@/lib/config/embeddings";
import { withTenant } from "@/lib/db/tenant";
import { INDEX_BATCH_CHUNKS, indexDocument } from "@/lib/documents/indexing/index-document";
import { EmbeddingProviders, LOCAL_EMBEDDING_MODEL, embeddingProvidersSingleton } from "@/lib/embeddings";
import { sendJson, startLoopback, type LoopbackServer } from "@/test/support/embedding-server";
import * as collection from "./route";
import * as one from "./[id]/route";
import * as upload from "./[id]/upload/route";
import * as indexRoute from "./[id]/index/route";
import * as search from "./search/route";
import * as embeddingConfig from "./embedding-config/route";

let admin: string, analyst: string, globex: string;
beforeAll(async () => {
  [admin, analyst, globex] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst"), tokenFor("globex", "admin")]);
});
afterEach(() => resetRateLimits());

// ---- helpers -------------------------------------------------------------

/** Swaps the process's embedding configuration, as a restart with another EMBEDDING_PROVIDER_CONFIG would. */
function switchEmbeddingSettings(settings: ConstructorParameters<typeof EmbeddingProviders>[0]) {
  embeddingProvidersSingleton.set(new EmbeddingProviders(settings, { backoff: { backoffBaseMs: 1, backoffMaxMs: 5 } }));
}
afterEach(() => switchEmbeddingSettings(LOCAL_EMBEDDING_SETTINGS));

async function createAndUpload(filename: string, bytes: Buffer, token = admin): Promise<string> {
  const created = await call(collection.POST, "POST", "/api/v1/documents", { token, body: { filename } });
  expect(created.status, created.text).toBe(201);
  const id = created.json.id as string;
  await replaceFile(id, bytes, token);
  return id;
}
async function replaceFile(id: string, bytes: Buffer, token = admin) {
  const res = await call(upload.POST, "POST", `/api/v1/documents/${id}/upload`, {
    token,
    rawBody: new Uint8Array(bytes),
    params: { id },
    headers: { "content-type": "application/octet-stream" },
  });
  expect(res.status, res.text).toBe(200);
  return res;
}
const index = (id: string, token = admin, model?: string) =>
  call(indexRoute.POST, "POST", `/api/v1/documents/${id}/index${model ? `?model=${encodeURIComponent(model)}` : ""}`, { token, params: { id } });
const removeIndex = (id: string, token = admin) => call(indexRoute.DELETE, "DELETE", `/api/v1/documents/${id}/index`, { token, params: { id } });
const find = (body: Record<string, unknown>, token = admin) => call(search.POST, "POST", "/api/v1/documents/search", { token, body });
const record = (id: string, token = admin) => call(one.GET, "GET", `/api/v1/documents/${id}`, { token, params: { id } });

/** Chunks stored for a document, per generation (read under the owner's tenant). */
async function chunkGenerations(orgId: string, documentId: string): Promise<Record<number, number>> {
  const rows = await withTenant({ orgId }, (tx) =>
    tx.$queryRaw<{ generation: number; n: number }[]>`SELECT generation, count(*)::int AS n FROM document_chunks WHERE document_id = ${documentId} GROUP BY generation`,
  );
  return Object.fromEntries(rows.map((r) => [r.generation, r.n]));
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Deterministic filler prose: `count` words from a small vocabulary, none of them a test's search words. */
function filler(count: number, seed = 1): string {
  const vocabulary = ["market", "report", "quarter", "figure", "team", "plan", "review", "budget", "office", "meeting", "agenda", "summary", "project", "update", "status", "schedule"];
  const words: string[] = [];
  let x = seed;
  for (let i = 0; i < count; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    words.push(vocabulary[x % vocabulary.length]);
  }
  return words.join(" ");
}

/** A real PDF with one text per page. */
async function multiPagePdf(pages: string[]): Promise<Buffer> {
  const doc = new PDFDocument({ size: "A4", compress: true });
  const parts: Buffer[] = [];
  doc.on("data", (c: Buffer) => parts.push(c));
  const done = new Promise<void>((resolve) => doc.on("end", () => resolve()));
  pages.forEach((text, i) => {
    if (i > 0) doc.addPage();
    doc.fontSize(9).text(text);
  });
  doc.end();
  await done;
  return Buffer.concat(parts);
}

/** A PDF with drawings only: what a scan without a text layer looks like to a text extractor. */
async function pdfWithoutText(): Promise<Buffer> {
  const doc = new PDFDocument({ size: "A5" });
  const parts: Buffer[] = [];
  doc.on("data", (c: Buffer) => parts.push(c));
  const done = new Promise<void>((resolve) => doc.on("end", () => resolve()));
  doc.rect(40, 40, 200, 300).fill("#333");
  doc.end();
  await done;
  return Buffer.concat(parts);
}

// ---- an OpenAI-compatible embedding server on 127.0.0.1 -------------------

const TINY_MODEL = "tiny-embed";
const TINY_DIMS = 8;
let provider: LoopbackServer;
/**
 * How the server answers: "ok"; "hold-batches": the calls that embed the first
 * batch of document chunks (the indexer splits it in two) are answered, later
 * calls wait for `held` and then fail with 500, or are answered when
 * `heldBatchesSucceed` (single-text query embeddings are always answered);
 * "hang": nothing is answered.
 */
let behaviour: "ok" | "hold-batches" | "hang" = "ok";
let heldBatchesSucceed = false;
let chunksServed = 0;
let held: Promise<void> = Promise.resolve();
let onHold: () => void = () => undefined;

/** Holds the loopback provider after the first batch: `reached` settles when it gets there, `release` lets it answer. */
function holdAfterFirstBatch(): { reached: Promise<void>; release: () => void } {
  behaviour = "hold-batches";
  let release!: () => void;
  const reached = new Promise<void>((resolve) => (onHold = resolve));
  held = new Promise<void>((resolve) => (release = resolve));
  return { reached, release };
}

beforeAll(async () => {
  provider = await startLoopback(async (request, response) => {
    const body = JSON.parse(request.body) as { model: string; input: string[]; encoding_format?: string };
    expect(request.path).toBe("/v1/embeddings");
    expect(body.model).toBe(TINY_MODEL);
    if (behaviour === "hang") return;
    const served = chunksServed;
    if (body.input.length > 1) chunksServed += body.input.length;
    if (behaviour === "hold-batches" && body.input.length > 1 && served >= INDEX_BATCH_CHUNKS) {
      onHold();
      await held;
      if (!heldBatchesSucceed) {
        sendJson(response, 500, { error: { message: "the embedding server fell over", type: "server_error" } });
        return;
      }
    }
    const data = body.input.map((text, index) => ({ object: "embedding", index, embedding: Array.from({ length: TINY_DIMS }, (_, k) => 1 + ((text.length * (k + 3)) % 7)) }));
    sendJson(response, 200, { object: "list", data, model: TINY_MODEL, usage: { prompt_tokens: 1, total_tokens: 1 } });
  });
});
afterAll(() => provider.close());

function switchToTinyProvider(settings: { request_timeout_ms?: number } = {}) {
  chunksServed = 0;
  switchEmbeddingSettings({
    ...LOCAL_EMBEDDING_SETTINGS,
    openai_compatible: { base_url: `${provider.url}/v1`, models: { [TINY_MODEL]: TINY_DIMS } },
    max_retries: 1,
    request_timeout_ms: settings.request_timeout_ms ?? 10_000,
  });
}

// ---- tests -----------------------------------------------------------------

describe("indexing and search", () => {
  let pdfId: string;

  it("indexes a multi-page PDF and finds the passage with its page numbers", async () => {
    const pdf = await multiPagePdf([
      `${filler(300, 1)} Refunds are paid within fourteen days of the returned goods arriving.`,
      `${filler(300, 2)}`,
      `${filler(250, 3)} Emperor penguins huddle against Antarctic blizzards during the long polar winter. ${filler(200, 4)}`,
    ]);
    pdfId = await createAndUpload("handbook.pdf", pdf);

    const res = await index(pdfId);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ id: pdfId, status: "indexed", status_reason: null, index_model: LOCAL_EMBEDDING_MODEL, index_dims: 384, index_generation: 1, index_stale: false, index_model_stale: false });
    expect(res.json.chunk_count).toBeGreaterThanOrEqual(3);
    expect(res.json.index_progress_done).toBe(res.json.chunk_count);
    expect(res.json.index_progress_total).toBe(res.json.chunk_count);
    expect(await chunkGenerations("org_acme", pdfId)).toEqual({ 1: res.json.chunk_count });

    const hits = await find({ query: "penguins in Antarctic blizzards", top_k: 3 }, analyst);
    expect(hits.status, hits.text).toBe(200);
    expect(hits.json).toMatchObject({ model: LOCAL_EMBEDDING_MODEL, dims: 384, mode: "vector" });
    // Only matches come back (the relevance floor, docs/search.md): the filler chunks hold none of the query's words.
    expect(hits.json.results.length).toBeGreaterThanOrEqual(1);
    expect(hits.json.results.every((h: { terms_matched: number; term_coverage: number }) => h.terms_matched >= 2 || h.term_coverage >= 0.5)).toBe(true);
    const best = hits.json.results[0];
    expect(best).toMatchObject({ document_id: pdfId, document_title: "handbook", filename: "handbook.pdf", extension: "pdf", row_start: null, row_end: null });
    expect(best.text).toContain("Emperor penguins huddle");
    expect(best.page_start).toBeLessThanOrEqual(3);
    expect(best.page_end).toBe(3);
    expect(best.word_end).toBeGreaterThan(best.word_start);
    expect(best.score).toBeCloseTo(best.similarity, 10);
    // Cosine similarity, best first.
    const scores = hits.json.results.map((h: { score: number }) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(scores[0]).toBeLessThanOrEqual(1);
    // The scale shown: all three of the query's words (stemmed) are in the passage.
    expect(best.relevance).toBe(1);

    const refunds = await find({ query: "when are refunds paid for returned goods", top_k: 1 });
    expect(refunds.json.results[0].text).toContain("Refunds are paid within fourteen days");
    expect(refunds.json.results[0].page_start).toBe(1);
  });

  it("hybrid mode fuses vector and full-text ranks", async () => {
    const res = await find({ query: "penguin blizzard", top_k: 2, mode: "hybrid" });
    expect(res.status, res.text).toBe(200);
    expect(res.json.mode).toBe("hybrid");
    const best = res.json.results[0];
    // Stemming ('english'): "penguin" matches "penguins", "blizzard" matches "blizzards".
    expect(best.text).toContain("Emperor penguins");
    // Ranked first by both lists: 2 / (60 + 1).
    expect(best.score).toBeCloseTo(2 / 61, 10);
    expect(best.similarity).toBeGreaterThan(0);
    expect(best).toMatchObject({ keyword_match: true, relevance: 1 });
    for (const hit of res.json.results.slice(1)) expect(hit.score).toBeLessThan(best.score);
  });

  it("finds CSV rows with their row numbers", async () => {
    const csv = Buffer.from(["city,product,units", "Oslo,kayak,12", "Lisbon,surfboard,40", "Vienna,sled,3"].join("\n"), "utf8");
    const id = await createAndUpload("sales.csv", csv);
    expect((await index(id)).status).toBe(200);
    const res = await find({ query: "surfboard Lisbon", document_ids: [id], top_k: 1 });
    expect(res.json.results[0]).toMatchObject({ document_id: id, extension: "csv", row_start: 1, row_end: 3, page_start: null });
    expect(res.json.results[0].text).toContain("product: surfboard");
    // The chunk spans rows 1-3; the passage that matches is row 2 (issue 28 §2), marks stripped from the text.
    expect(res.json.results[0]).toMatchObject({ rows: { start: 2, end: 2 }, passage: "city: Lisbon\nproduct: surfboard\nunits: 40", page: null });
    expect(res.json.results[0].text).toBe("city: Oslo\nproduct: kayak\nunits: 12\n\ncity: Lisbon\nproduct: surfboard\nunits: 40\n\ncity: Vienna\nproduct: sled\nunits: 3");
  });

  it("validates the request: query length, top_k, model, document_ids", async () => {
    const bad = async (body: Record<string, unknown>, loc: string) => {
      const res = await find(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(res.json.detail[0].loc).toEqual(["body", loc]);
    };
    await bad({ query: "" }, "query");
    await bad({ query: "   \n\t " }, "query");
    await bad({ query: "x".repeat(100_000) }, "query");
    await bad({ query: "penguins", top_k: 0 }, "top_k");
    await bad({ query: "penguins", top_k: 10_000 }, "top_k");
    await bad({ query: "penguins", top_k: 2.5 }, "top_k");
    await bad({ query: "penguins", mode: "keyword" }, "mode");
    await bad({ query: "penguins", document_ids: "doc_1" }, "document_ids");
    await bad({}, "query");
    expect((await find({ query: "x".repeat(4000), top_k: 100 })).status).toBe(200);

    const unknown = await find({ query: "penguins", model: "no-such-model" });
    expect(unknown.status).toBe(422);
    expect(unknown.json.detail).toMatch(/unknown embedding model 'no-such-model'/);
    const unknownIndex = await index(pdfId, admin, "no-such-model");
    expect(unknownIndex.status).toBe(422);
    expect((await record(pdfId)).json).toMatchObject({ status: "indexed", index_generation: 1 });

    expect((await find({ query: "penguins", document_ids: [] })).json.results).toEqual([]);
  });

  it("keeps organizations apart: search, document_ids, index and remove index", async () => {
    const theirs = await createAndUpload("globex-penguins.txt", Buffer.from("Emperor penguins huddle against Antarctic blizzards, says Globex.\n"), globex);
    expect((await index(theirs, globex)).status).toBe(200);

    const acmeHits = await find({ query: "penguins huddle Antarctic blizzards", top_k: 100 });
    expect(acmeHits.json.results.length).toBeGreaterThan(0);
    expect(acmeHits.json.results.every((h: { document_id: string }) => h.document_id !== theirs)).toBe(true);

    const globexHits = await find({ query: "penguins huddle Antarctic blizzards", top_k: 100 }, globex);
    expect(globexHits.json.results.map((h: { document_id: string }) => h.document_id)).toEqual([theirs]);
    expect((await find({ query: "penguins", document_ids: [pdfId], mode: "hybrid" }, globex)).json.results).toEqual([]);
    expect((await find({ query: "penguins", document_ids: [theirs] })).json.results).toEqual([]);

    expect((await index(pdfId, globex)).status).toBe(404);
    expect((await removeIndex(pdfId, globex)).status).toBe(404);
    expect((await record(pdfId)).json).toMatchObject({ status: "indexed", index_generation: 1 });

    const config = await call(embeddingConfig.GET, "GET", "/api/v1/documents/embedding-config", { token: globex });
    expect(config.json.indexed_documents).toBe(1);
  });

  it("lets analysts search and read the configuration, not index", async () => {
    expect((await index(pdfId, analyst)).status).toBe(403);
    expect((await removeIndex(pdfId, analyst)).status).toBe(403);
    expect((await find({ query: "penguins" })).status).toBe(200);
    expect((await call(search.POST, "POST", "/api/v1/documents/search", { body: { query: "penguins" } })).status).toBe(401);

    const config = await call(embeddingConfig.GET, "GET", "/api/v1/documents/embedding-config", { token: analyst });
    expect(config.status).toBe(200);
    expect(config.json).toMatchObject({ provider: "local", model: LOCAL_EMBEDDING_MODEL, dims: 384, configured: true, reason: null, vector_index: "hnsw", indexed_documents: 2, stale: { model_changed: 0, file_replaced: 0, total: 0 } });
    expect(config.json.available_models).toContainEqual({ provider: "local", model: LOCAL_EMBEDDING_MODEL, dims: 384 });
  });

  it("refuses documents without a file (409) and unknown ids (404)", async () => {
    const created = await call(collection.POST, "POST", "/api/v1/documents", { token: admin, body: { filename: "empty-record.txt" } });
    const res = await index(created.json.id);
    expect(res.status).toBe(409);
    expect(res.json.detail).toMatch(/No file has been uploaded/);
    expect((await index("doc_missing")).status).toBe(404);
    expect((await removeIndex("doc_missing")).status).toBe(404);
  });

  it("does not let a run whose process died block the document past its lease", async () => {
    const id = await createAndUpload("orphan.txt", Buffer.from("Orphaned runs must not block forever.\n"));
    const claim = (minutesAgo: number) =>
      withTenant({ orgId: "org_acme" }, (tx) =>
        tx.$executeRaw`UPDATE documents SET status = 'indexing', index_job_id = 'dead-run', index_job_started_at = now() - make_interval(mins => ${minutesAgo}) WHERE id = ${id}`,
      );
    await claim(1);
    expect((await index(id)).status).toBe(409);
    expect((await removeIndex(id)).status).toBe(409);
    await claim(30);
    const res = await index(id);
    expect(res.status, res.text).toBe(200);
    expect(res.json).toMatchObject({ status: "indexed", chunk_count: 1 });
  });

  it("ends unreadable files as failed with the reason: no text layer, corrupt PDF, blank text", async () => {
    const cases: [string, Buffer, RegExp][] = [
      ["scan.pdf", await pdfWithoutText(), /no text layer/i],
      ["broken.pdf", Buffer.from("%PDF-1.7\n1 0 obj << /Type /Catalog >>\ngarbage without xref\n%%EOF\n"), /./],
      ["blank.txt", Buffer.from(" \n\t \r\n   \n"), /no text/i],
    ];
    for (const [name, bytes, reason] of cases) {
      const id = await createAndUpload(name, bytes);
      const res = await index(id);
      expect(res.status, `${name}: ${res.text}`).toBe(422);
      expect(res.json.detail).toMatch(reason);
      const after = (await record(id)).json;
      expect(after).toMatchObject({ status: "failed", chunk_count: 0, index_model: null, index_generation: 0 });
      expect(after.status_reason).toMatch(reason);
      expect(await chunkGenerations("org_acme", id)).toEqual({});
      // The reason is what the caller was told.
      expect(res.json.detail).toContain(after.status_reason);
    }
  });

  it("re-indexes atomically: a provider failing mid-index leaves the previous index searchable and intact", async () => {
    // Over one batch of chunks, so the new generation is stored in several batches.
    const words = 66_000;
    const text = `Lighthouse keepers log the passing ships every night. ${filler(words, 7)}`;
    const id = await createAndUpload("log.txt", Buffer.from(text));
    const first = await index(id);
    expect(first.status, first.text).toBe(200);
    const chunkCount = first.json.chunk_count as number;
    expect(chunkCount).toBeGreaterThan(INDEX_BATCH_CHUNKS);

    switchToTinyProvider();
    const { reached, release } = holdAfterFirstBatch();
    const running = index(id, admin, TINY_MODEL);
    await reached;
    // The first batch is stored while the second one is being embedded.
    await waitFor(async () => (await record(id)).json.index_progress_done === INDEX_BATCH_CHUNKS);

    // Mid-run: the first batch of the new generation is stored, yet nothing of it is visible.
    const during = (await record(id)).json;
    expect(during).toMatchObject({ status: "indexing", index_generation: 1, index_model: LOCAL_EMBEDDING_MODEL, index_progress_total: chunkCount });
    expect(during.index_progress_done).toBe(INDEX_BATCH_CHUNKS);
    expect(await chunkGenerations("org_acme", id)).toEqual({ 1: chunkCount, 2: INDEX_BATCH_CHUNKS });
    const oldHits = await find({ query: "lighthouse keepers passing ships", document_ids: [id], top_k: 1 });
    expect(oldHits.json.results[0].text).toContain("Lighthouse keepers");
    expect((await find({ query: "lighthouse keepers", model: TINY_MODEL })).json.results).toEqual([]);
    // A second run while one is going: 409, state untouched.
    const second = await index(id);
    expect(second.status).toBe(409);
    expect((await removeIndex(id)).status).toBe(409);

    release();
    const failed = await running;
    expect(failed.status).toBe(502);
    expect(failed.json.detail).toMatch(/embedding provider/);

    const after = (await record(id)).json;
    expect(after).toMatchObject({ status: "indexed", index_generation: 1, index_model: LOCAL_EMBEDDING_MODEL, chunk_count: chunkCount, index_progress_done: 0 });
    expect(after.status_reason).toMatch(/Re-indexing failed .*previous index is still in use/);
    expect(await chunkGenerations("org_acme", id)).toEqual({ 1: chunkCount });
    expect((await find({ query: "lighthouse keepers passing ships", document_ids: [id], top_k: 1 })).json.results[0].text).toContain("Lighthouse keepers");

    // A successful run swaps generation 2 in and deletes generation 1.
    behaviour = "ok";
    const swapped = await index(id, admin, TINY_MODEL);
    expect(swapped.status, swapped.text).toBe(200);
    expect(swapped.json).toMatchObject({ status: "indexed", status_reason: null, index_generation: 2, index_model: TINY_MODEL, index_dims: TINY_DIMS, chunk_count: chunkCount, index_model_stale: true });
    expect(await chunkGenerations("org_acme", id)).toEqual({ 2: chunkCount });
    // The old model's chunks are gone; the new model's are searched (exact scan: no HNSW index for this model).
    expect((await find({ query: "lighthouse keepers", document_ids: [id] })).json.results).toEqual([]);
    const tiny = await find({ query: "lighthouse keepers", document_ids: [id], model: TINY_MODEL, top_k: 3 });
    expect(tiny.json).toMatchObject({ model: TINY_MODEL, dims: TINY_DIMS });
    expect(tiny.json.results).toHaveLength(3);

    const config = await call(embeddingConfig.GET, "GET", "/api/v1/documents/embedding-config", { token: admin });
    expect(config.json.stale).toMatchObject({ model_changed: 1, total: 1 });

    // Back to the active model: no longer stale.
    const back = await index(id);
    expect(back.json).toMatchObject({ index_model: LOCAL_EMBEDDING_MODEL, index_model_stale: false, index_generation: 3 });
  }, 120_000);

  it("a file uploaded while indexing runs: the status stays indexing, and the fresh index is marked stale", async () => {
    const id = await createAndUpload("ledger.txt", Buffer.from(`Ferry timetable for the winter season. ${filler(66_000, 11)}`));
    switchToTinyProvider();
    heldBatchesSucceed = true;
    const { reached, release } = holdAfterFirstBatch();
    const running = index(id, admin, TINY_MODEL);
    await reached;

    const replaced = await replaceFile(id, Buffer.from("Ferry timetable, summer edition.\n"));
    expect(replaced.json).toMatchObject({ status: "indexing", index_stale: true });
    release();
    const done = await running;
    expect(done.status, done.text).toBe(200);
    expect(done.json).toMatchObject({ status: "indexed", index_model: TINY_MODEL, index_stale: true, index_generation: 1 });
    behaviour = "ok";
    heldBatchesSucceed = false;
  }, 120_000);

  it("a provider timing out on the first index leaves the document failed, not half-indexed", async () => {
    switchToTinyProvider({ request_timeout_ms: 200 });
    behaviour = "hang";
    const id = await createAndUpload("short.txt", Buffer.from("Short note about harbour cranes.\n"));
    const res = await index(id, admin, TINY_MODEL);
    expect(res.status, res.text).toBe(504);
    expect((await record(id)).json).toMatchObject({ status: "failed", chunk_count: 0, index_model: null });
    expect((await record(id)).json.status_reason).toMatch(/time/i);
    expect(await chunkGenerations("org_acme", id)).toEqual({});
    behaviour = "ok";
  });

  it("stops a run at its time limit with 504 and keeps the previous index", async () => {
    const id = await createAndUpload("slow.txt", Buffer.from(`Tugboats guide tankers into the harbour. ${filler(20_000, 9)}`));
    expect((await index(id)).status).toBe(200);
    const before = (await record(id)).json;
    const principal = { userId: "usr_acme_admin", orgId: "org_acme", orgSlug: "acme", orgName: "Acme", role: "admin" as const, locationIds: null, via: "bearer" as const };
    const stopped = await indexDocument(principal, id, { timeoutMs: 1 }).then(
      () => null,
      (error: unknown) => error as TimedOut,
    );
    expect(stopped).toBeInstanceOf(TimedOut);
    expect(stopped!.detail).toMatch(/longer than/);
    const after = (await record(id)).json;
    expect(after).toMatchObject({ status: "indexed", index_generation: before.index_generation, chunk_count: before.chunk_count });
    expect(after.status_reason).toMatch(/Re-indexing failed \(Indexing took longer than/);
    expect(await chunkGenerations("org_acme", id)).toEqual({ [before.index_generation]: before.chunk_count });
  });

  it("marks the index stale when the file is replaced, and searches the old text until re-indexed", async () => {
    const staleCount = async () => (await call(embeddingConfig.GET, "GET", "/api/v1/documents/embedding-config", { token: admin })).json.stale.file_replaced as number;
    const id = await createAndUpload("menu.txt", Buffer.from("The canteen serves mushroom risotto on Mondays.\n"));
    expect((await index(id)).status).toBe(200);
    const before = await staleCount();
    const replaced = await replaceFile(id, Buffer.from("The canteen serves lentil curry on Tuesdays.\n"));
    expect(replaced.json).toMatchObject({ status: "uploaded", index_stale: true, chunk_count: 1 });
    expect(await staleCount()).toBe(before + 1);
    expect((await find({ query: "canteen", document_ids: [id] })).json.results[0].text).toContain("mushroom risotto");

    const reindexed = await index(id);
    expect(reindexed.json).toMatchObject({ status: "indexed", index_stale: false });
    expect((await find({ query: "canteen", document_ids: [id] })).json.results[0].text).toContain("lentil curry");
  });

  it("removes an index, and deleting a document removes its chunks", async () => {
    const id = await createAndUpload("rota.txt", Buffer.from("The night shift rota changes every fortnight.\n"));
    expect((await index(id)).status).toBe(200);
    const removed = await removeIndex(id);
    expect(removed.status, removed.text).toBe(200);
    expect(removed.json).toMatchObject({ status: "uploaded", chunk_count: 0, index_model: null, index_dims: null, indexed_at: null, index_generation: 1 });
    expect(await chunkGenerations("org_acme", id)).toEqual({});
    expect((await find({ query: "night shift rota", document_ids: [id] })).json.results).toEqual([]);
    // Idempotent.
    expect((await removeIndex(id)).status).toBe(200);

    expect((await index(id)).json.index_generation).toBe(2);
    expect((await call(one.DELETE, "DELETE", `/api/v1/documents/${id}`, { token: admin, params: { id } })).status).toBe(204);
    expect(await chunkGenerations("org_acme", id)).toEqual({});
  });

  it("answers 503 with the reason when the embedding provider is not configured", async () => {
    switchEmbeddingSettings({ ...LOCAL_EMBEDDING_SETTINGS, default_provider: "openai" });
    const config = await call(embeddingConfig.GET, "GET", "/api/v1/documents/embedding-config", { token: analyst });
    expect(config.json).toMatchObject({ provider: "openai", model: "text-embedding-3-small", configured: false, reason: "openai.api_key is missing", vector_index: "hnsw" });
    expect(JSON.stringify(config.json)).not.toMatch(/api_key"/);
    // Everything indexed locally is now stale against the active model.
    expect(config.json.stale.model_changed).toBe(config.json.indexed_documents);
    const searched = await find({ query: "penguins" });
    expect(searched.status).toBe(503);
    expect(searched.json.detail).toBe("embedding provider is not configured: openai.api_key is missing");
    const indexed = await index(pdfId);
    expect(indexed.status).toBe(503);
    expect((await record(pdfId)).json).toMatchObject({ status: "indexed", index_model_stale: true });
    const listed = await call(collection.GET, "GET", "/api/v1/documents?status=indexed&limit=100", { token: analyst });
    expect(listed.json.items.length).toBeGreaterThan(0);
    expect(listed.json.items.every((d: { index_model_stale: boolean }) => d.index_model_stale)).toBe(true);
  });

  it("rate-limits indexing with 429 and Retry-After", async () => {
    let last = await index("doc_missing");
    for (let i = 0; i < 40 && last.status !== 429; i++) last = await index("doc_missing");
    expect(last.status).toBe(429);
    expect(Number(last.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
