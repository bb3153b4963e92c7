import { describe, expect, it } from "vitest";
import { LOCAL_EMBEDDING_SETTINGS, type EmbeddingSettings } from "@/lib/config/embeddings";
import { EmbeddingProviders } from "./index";
import { FAST_BACKOFF, fakeVector, loopbackPerTest, rejection, sendJson, type LoopbackHandler } from "@/test/support/embedding-server";
import { measurePace, paced } from "@/test/machine-pace";

const KEY = "sk-test-0123456789abcdefSECRET";
const loopback = loopbackPerTest();

interface EmbeddingsBody {
  model: string;
  input: string[];
  encoding_format: string;
}

/** Answers like OpenAI's /v1/embeddings after checking the documented request shape; items come back in reverse order, each with its index. */
const openAiLike =
  (dims: number): LoopbackHandler =>
  (request, response) => {
    if (request.method !== "POST" || request.path !== "/v1/embeddings") return sendJson(response, 404, { error: { message: `unexpected ${request.method} ${request.path}` } });
    const body = JSON.parse(request.body) as EmbeddingsBody;
    if (typeof body.model !== "string" || !Array.isArray(body.input) || body.encoding_format !== "float") {
      return sendJson(response, 400, { error: { message: "bad request shape" } });
    }
    const data = body.input.map((text, index) => ({ object: "embedding", index, embedding: fakeVector(Number(text.replace(/\D/g, "")) || 0, dims) }));
    sendJson(response, 200, { object: "list", model: body.model, data: data.reverse(), usage: { prompt_tokens: 1, total_tokens: 1 } });
  };

function openAiSettings(url: string, extra: Partial<EmbeddingSettings> = {}): EmbeddingSettings {
  return { ...LOCAL_EMBEDDING_SETTINGS, default_provider: "openai", openai: { api_key: KEY, base_url: `${url}/v1` }, ...extra };
}

describe("OpenAI embeddings through the openai SDK", () => {
  it("sends the documented request with the key as a bearer token and returns vectors in input order", async () => {
    const server = await loopback.start(openAiLike(1536));
    const embedder = new EmbeddingProviders(openAiSettings(server.url)).embedder(null);
    expect([embedder.provider, embedder.model, embedder.dims]).toEqual(["openai", "text-embedding-3-small", 1536]);

    const vectors = await embedder.embedDocuments(["t1", "t2", "t3"]);
    expect(vectors).toEqual([fakeVector(1, 1536), fakeVector(2, 1536), fakeVector(3, 1536)]);
    expect(await embedder.embedQuery("t9")).toEqual(fakeVector(9, 1536));

    const [first] = server.requests;
    expect(first.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(first.headers["content-type"]).toMatch(/application\/json/);
    expect(JSON.parse(first.body)).toEqual({ model: "text-embedding-3-small", input: ["t1", "t2", "t3"], encoding_format: "float" });
  });

  it("uses the configured model and its dimension", async () => {
    const server = await loopback.start(openAiLike(3072));
    const embedder = new EmbeddingProviders(openAiSettings(server.url, { default_model: "text-embedding-3-large" })).embedder(null);
    expect(embedder.dims).toBe(3072);
    expect((await embedder.embedQuery("x")).length).toBe(3072);
    expect(JSON.parse(server.requests[0].body).model).toBe("text-embedding-3-large");
  });

  it("batches at 2,048 inputs and reports progress after each batch", async () => {
    const server = await loopback.start(openAiLike(1536));
    const embedder = new EmbeddingProviders(openAiSettings(server.url)).embedder("text-embedding-3-small");
    const texts = Array.from({ length: 2100 }, (_, i) => `t${i}`);
    const progress: [number, number][] = [];
    const vectors = await embedder.embedDocuments(texts, { onProgress: (done, total) => progress.push([done, total]) });
    expect(server.requests.map((r) => (JSON.parse(r.body) as EmbeddingsBody).input.length)).toEqual([2048, 52]);
    expect(progress).toEqual([
      [2048, 2100],
      [2100, 2100],
    ]);
    expect(vectors[2099]).toEqual(fakeVector(2099, 1536));
  });

  it("keeps each request inside the 300,000-token budget", async () => {
    const server = await loopback.start(openAiLike(1536));
    const embedder = new EmbeddingProviders(openAiSettings(server.url)).embedder(null);
    // 240,000 bytes is estimated at 80,001 tokens: three fit in 300,000, a fourth does not.
    const texts = Array.from({ length: 5 }, (_, i) => `t${i} ${"a".repeat(240_000 - 3)}`);
    await embedder.embedDocuments(texts);
    expect(server.requests.map((r) => (JSON.parse(r.body) as EmbeddingsBody).input.length)).toEqual([3, 2]);
  });

  it("retries a 429 after the Retry-After the server asked for, then succeeds", async () => {
    let calls = 0;
    const ok = openAiLike(1536);
    const server = await loopback.start((request, response) => {
      calls += 1;
      if (calls === 1) return sendJson(response, 429, { error: { message: "Rate limit reached" } }, { "retry-after-ms": "150" });
      return ok(request, response);
    });
    const embedder = new EmbeddingProviders(openAiSettings(server.url), FAST_BACKOFF).embedder(null);
    const started = Date.now();
    expect(await embedder.embedQuery("t4")).toEqual(fakeVector(4, 1536));
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(server.requests).toHaveLength(2);
  });

  it("answers 429 with Retry-After, not 502, when the provider still rate-limits after the retries", async () => {
    const server = await loopback.start((_request, response) => sendJson(response, 429, { error: { message: "Rate limit reached" } }, { "retry-after": "1" }));
    const embedder = new EmbeddingProviders(openAiSettings(server.url, { max_retries: 1 }), FAST_BACKOFF).embedder(null);
    const error = await rejection(embedder.embedQuery("t1"));
    expect([error.status, error.headers["Retry-After"]]).toEqual([429, "1"]);
    expect(error.detail).toBe("embedding provider openai is rate-limiting requests: Rate limit reached; retry in 1 s");
    expect(server.requests).toHaveLength(2);

    // No Retry-After from the provider: the wait the next backoff step would have taken, in whole seconds.
    const silent = await loopback.start((_request, response) => sendJson(response, 429, { error: { message: "Rate limit reached" } }));
    const quiet = new EmbeddingProviders(openAiSettings(silent.url, { max_retries: 1 }), { backoff: { backoffBaseMs: 5, backoffMaxMs: 2500 } }).embedder(null);
    const fallback = await rejection(quiet.embedQuery("t1"));
    expect([fallback.status, fallback.headers["Retry-After"]]).toEqual([429, "1"]);
  });

  it("gives up after max_retries on repeated 500s with a 502 naming the provider and status", async () => {
    const server = await loopback.start((_request, response) => sendJson(response, 500, { error: { message: "The server had an error" } }));
    const embedder = new EmbeddingProviders(openAiSettings(server.url, { max_retries: 2 }), FAST_BACKOFF).embedder(null);
    const error = await rejection(embedder.embedDocuments(["t1"]));
    expect(error.status).toBe(502);
    expect(error.detail).toBe("embedding provider openai failed: 500 The server had an error");
    expect(server.requests).toHaveLength(3);
  });

  it("answers 504 when the provider hangs, after retrying each attempt's timeout", async () => {
    const server = await loopback.start(() => undefined); // never answers
    const embedder = new EmbeddingProviders(openAiSettings(server.url, { max_retries: 1, request_timeout_ms: 200 }), FAST_BACKOFF).embedder(null);
    const bound = paced(5_000, measurePace());
    const started = Date.now();
    const error = await rejection(embedder.embedQuery("t1"));
    expect(error.status).toBe(504);
    expect(error.detail).toBe("embedding provider openai timed out after 200 ms (2 attempts)");
    expect(server.requests).toHaveLength(2);
    expect(Date.now() - started).toBeLessThan(bound);
  });

  it("does not retry a 401 and never puts the key in the error, even when the server echoes it", async () => {
    const server = await loopback.start((request, response) =>
      sendJson(response, 401, { error: { message: `Incorrect API key provided: ${request.headers.authorization?.slice(7)}. Also sk-abc***xyz.`, code: "invalid_api_key" } }),
    );
    const embedder = new EmbeddingProviders(openAiSettings(server.url), FAST_BACKOFF).embedder(null);
    const error = await rejection(embedder.embedQuery("t1"));
    expect(error.status).toBe(502);
    expect(error.detail).toMatch(/^embedding provider openai failed: 401 Incorrect API key provided: \[redacted\]/);
    expect(String(error.detail)).not.toContain(KEY);
    expect(String(error.detail)).not.toContain("sk-abc");
    expect(server.requests).toHaveLength(1);
  });

  it("reports a connection refused as a 502 network error", async () => {
    const server = await loopback.start(() => undefined);
    const url = server.url;
    await server.close();
    const embedder = new EmbeddingProviders(openAiSettings(url, { max_retries: 1 }), FAST_BACKOFF).embedder(null);
    const error = await rejection(embedder.embedQuery("t1"));
    expect(error.status).toBe(502);
    expect(error.detail).toMatch(/^embedding provider openai failed: network error /);
  });

  it("rejects vectors of the wrong dimension instead of storing them", async () => {
    const server = await loopback.start(openAiLike(10));
    const embedder = new EmbeddingProviders(openAiSettings(server.url), FAST_BACKOFF).embedder(null);
    const error = await rejection(embedder.embedQuery("t1"));
    expect(error.detail).toBe("embedding provider openai failed: returned a vector of 10 dimensions, expected 1536");
    expect(server.requests).toHaveLength(1);
  });

  it("stops at once, without retrying, when the caller aborts", async () => {
    const controller = new AbortController();
    // Aborted once the request has arrived (the server never answers it), not after a fixed delay:
    // a slow start could still be before the request then, and nothing would have been sent.
    const server = await loopback.start(() => controller.abort(new Error("index cancelled")));
    const embedder = new EmbeddingProviders(openAiSettings(server.url, { request_timeout_ms: 10_000 }), FAST_BACKOFF).embedder(null);
    const pending = embedder.embedDocuments(["t1"], { signal: controller.signal });
    await expect(pending).rejects.toThrow("index cancelled");
    expect(server.requests).toHaveLength(1);
  });
});

describe("OpenAI-compatible servers", () => {
  const compatible = (url: string, apiKey?: string): EmbeddingSettings => ({
    ...LOCAL_EMBEDDING_SETTINGS,
    default_provider: "openai_compatible",
    openai_compatible: { base_url: `${url}/v1`, api_key: apiKey, models: { "nomic-embed-text": 768, "bge-small": 384 } },
  });

  it("calls the base URL with the first declared model and no Authorization header when no key is set", async () => {
    const server = await loopback.start(openAiLike(768));
    const providers = new EmbeddingProviders(compatible(server.url));
    const embedder = providers.embedder(null);
    expect([embedder.provider, embedder.model, embedder.dims]).toEqual(["openai_compatible", "nomic-embed-text", 768]);
    expect(await embedder.embedDocuments(["t5"])).toEqual([fakeVector(5, 768)]);
    expect(server.requests[0].headers.authorization).toBeUndefined();
    expect(JSON.parse(server.requests[0].body)).toEqual({ model: "nomic-embed-text", input: ["t5"], encoding_format: "float" });
  });

  it("sends the key when one is set and serves every declared model", async () => {
    const server = await loopback.start(openAiLike(384));
    const embedder = new EmbeddingProviders(compatible(server.url, "local-key-123456")).embedder("bge-small");
    expect(embedder.dims).toBe(384);
    await embedder.embedQuery("t1");
    expect(server.requests[0].headers.authorization).toBe("Bearer local-key-123456");
  });
});
