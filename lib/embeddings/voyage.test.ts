import { describe, expect, it } from "vitest";
import { LOCAL_EMBEDDING_SETTINGS, type EmbeddingSettings } from "@/lib/config/embeddings";
import { EmbeddingProviders } from "./index";
import { FAST_BACKOFF, fakeVector, loopbackPerTest, rejection, sendJson, type LoopbackHandler } from "@/test/support/embedding-server";

const KEY = "pa-voyage-test-key-0123456789";
const loopback = loopbackPerTest();

interface VoyageBody {
  input: string[];
  model: string;
  input_type: string;
}

/** Voyage's POST /v1/embeddings: checks the documented body and bearer key, answers {data: [{embedding, index}]}. */
const voyageLike =
  (dims: number): LoopbackHandler =>
  (request, response) => {
    if (request.method !== "POST" || request.path !== "/v1/embeddings") return sendJson(response, 404, { detail: `unexpected ${request.path}` });
    if (request.headers.authorization !== `Bearer ${KEY}`) return sendJson(response, 401, { detail: "Provided API key is invalid." });
    const body = JSON.parse(request.body) as VoyageBody;
    if (!Array.isArray(body.input) || typeof body.model !== "string" || !["document", "query"].includes(body.input_type)) return sendJson(response, 400, { detail: "bad body" });
    const data = body.input.map((text, index) => ({ object: "embedding", embedding: fakeVector(Number(text.replace(/\D/g, "")) || 0, dims), index }));
    sendJson(response, 200, { object: "list", data, model: body.model, usage: { total_tokens: body.input.length } });
  };

function settings(url: string, extra: Partial<EmbeddingSettings> = {}): EmbeddingSettings {
  return { ...LOCAL_EMBEDDING_SETTINGS, default_provider: "voyage", voyage: { api_key: KEY, base_url: `${url}/v1` }, ...extra };
}

describe("Voyage AI embeddings", () => {
  it("sends {input, model, input_type} with document for chunks and query for questions", async () => {
    const server = await loopback.start(voyageLike(1024));
    const embedder = new EmbeddingProviders(settings(server.url)).embedder(null);
    expect([embedder.provider, embedder.model, embedder.dims]).toEqual(["voyage", "voyage-3", 1024]);
    expect(await embedder.embedDocuments(["t1", "t2"])).toEqual([fakeVector(1, 1024), fakeVector(2, 1024)]);
    expect(await embedder.embedQuery("t3")).toEqual(fakeVector(3, 1024));
    expect(server.requests.map((r) => JSON.parse(r.body) as VoyageBody)).toEqual([
      { input: ["t1", "t2"], model: "voyage-3", input_type: "document" },
      { input: ["t3"], model: "voyage-3", input_type: "query" },
    ]);
  });

  it("serves voyage-3-lite at 512 and voyage-code-3 at 1024 dimensions", async () => {
    const server = await loopback.start(voyageLike(512));
    const providers = new EmbeddingProviders(settings(server.url));
    expect((await providers.embedder("voyage-3-lite").embedQuery("t1")).length).toBe(512);
    expect(providers.embedder("voyage-code-3").dims).toBe(1024);
  });

  it("sends at most 128 inputs per request", async () => {
    const server = await loopback.start(voyageLike(1024));
    const embedder = new EmbeddingProviders(settings(server.url)).embedder(null);
    const progress: number[] = [];
    const vectors = await embedder.embedDocuments(
      Array.from({ length: 130 }, (_, i) => `t${i}`),
      { onProgress: (done) => progress.push(done) },
    );
    expect(server.requests.map((r) => (JSON.parse(r.body) as VoyageBody).input.length)).toEqual([128, 2]);
    expect(progress).toEqual([128, 130]);
    expect(vectors[129]).toEqual(fakeVector(129, 1024));
  });

  it("retries a 429 with Retry-After 0 and a 502, then succeeds", async () => {
    const statuses = [429, 502];
    const ok = voyageLike(1024);
    const server = await loopback.start((request, response) => {
      const status = statuses.shift();
      if (status) return sendJson(response, status, { detail: "slow down" }, { "retry-after": "0" });
      return ok(request, response);
    });
    const embedder = new EmbeddingProviders(settings(server.url), FAST_BACKOFF).embedder(null);
    expect(await embedder.embedQuery("t4")).toEqual(fakeVector(4, 1024));
    expect(server.requests).toHaveLength(3);
  });

  it("fails a Retry-After longer than a minute at once instead of holding the job: 429 passing the provider's Retry-After on", async () => {
    const server = await loopback.start((_request, response) => sendJson(response, 429, { detail: "Rate limit" }, { "retry-after": "3600" }));
    const embedder = new EmbeddingProviders(settings(server.url), FAST_BACKOFF).embedder(null);
    const error = await rejection(embedder.embedQuery("t1"));
    expect([error.status, error.headers["Retry-After"]]).toEqual([429, "3600"]);
    expect(error.detail).toBe("embedding provider voyage is rate-limiting requests: Rate limit; retry in 3600 s");
    expect(server.requests).toHaveLength(1);
  });

  it("ends repeated 500s in a 502 with Voyage's detail, and hangs in a 504", async () => {
    let server = await loopback.start((_request, response) => sendJson(response, 500, { detail: "Internal error" }));
    const failing = new EmbeddingProviders(settings(server.url, { max_retries: 3 }), FAST_BACKOFF).embedder(null);
    const error = await rejection(failing.embedDocuments(["t1"]));
    expect([error.status, error.detail]).toEqual([502, "embedding provider voyage failed: 500 Internal error"]);
    expect(server.requests).toHaveLength(4);
    await server.close();

    server = await loopback.start(() => undefined);
    const hanging = new EmbeddingProviders(settings(server.url, { max_retries: 0, request_timeout_ms: 150 }), FAST_BACKOFF).embedder(null);
    const timeout = await rejection(hanging.embedQuery("t1"));
    expect([timeout.status, timeout.detail]).toEqual([504, "embedding provider voyage timed out after 150 ms (1 attempts)"]);
  });

  it("never puts the key in an error, even when the server echoes it", async () => {
    const server = await loopback.start((request, response) => sendJson(response, 403, { detail: `Key ${request.headers.authorization} is not allowed` }));
    const embedder = new EmbeddingProviders(settings(server.url), FAST_BACKOFF).embedder(null);
    const error = await rejection(embedder.embedQuery("t1"));
    expect(error.detail).toBe("embedding provider voyage failed: 403 Key Bearer [redacted] is not allowed");
    expect(String(error.detail)).not.toContain(KEY);
  });
});
