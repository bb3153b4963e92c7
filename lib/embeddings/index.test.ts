import { describe, expect, it } from "vitest";
import { LOCAL_EMBEDDING_SETTINGS, type EmbeddingSettings } from "@/lib/config/embeddings";
import { httpViewOf } from "@/lib/api/errors";
import { DomainError } from "@/lib/errors";
import { EmbeddingProviders, LOCAL_EMBEDDING_MODEL, embeddingStatus, getEmbedder, knownEmbeddingModel } from "./index";
import { localEmbedding } from "./local";
import { batchRanges, estimateTokens, retryAfterMs, safeMessage } from "./retry";

const LOCAL_INFO = { provider: "local", model: LOCAL_EMBEDDING_MODEL, dims: 384 };

/** What the API caller would receive for the domain error `fn` throws. */
function thrown(fn: () => unknown): ReturnType<typeof httpViewOf> {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(DomainError);
    return httpViewOf(error as DomainError);
  }
  throw new Error("expected a DomainError");
}

describe("embedding status and model selection", () => {
  it("uses the local embedder when EMBEDDING_PROVIDER_CONFIG is unset (the process-wide accessors)", async () => {
    expect(embeddingStatus()).toEqual({
      ...LOCAL_INFO,
      configured: true,
      reason: null,
      available_models: [LOCAL_INFO],
      notice: { message: "no embedding provider configured: offline word-matching embedder in use", variable: "EMBEDDING_PROVIDER_CONFIG" },
    });
    const embedder = getEmbedder();
    expect(embedder).toBe(getEmbedder(null));
    expect(await embedder.embedQuery("hello world")).toEqual(localEmbedding("hello world"));
    expect(knownEmbeddingModel("voyage-3")).toEqual({ provider: "voyage", model: "voyage-3", dims: 1024 });
    expect(knownEmbeddingModel("gpt-4o")).toBeUndefined();
  });

  it("reports a selected provider without its key as not configured, with the reason, and answers 503", () => {
    const providers = new EmbeddingProviders({ ...LOCAL_EMBEDDING_SETTINGS, default_provider: "openai", openai: { base_url: "https://gateway.example/v1" } });
    expect(providers.status()).toEqual({
      provider: "openai",
      model: "text-embedding-3-small",
      dims: 1536,
      configured: false,
      reason: "openai.api_key is missing",
      available_models: [LOCAL_INFO],
      notice: null,
    });
    const error = thrown(() => providers.embedder(null));
    expect([error.status, error.detail]).toEqual([503, "embedding provider is not configured: openai.api_key is missing"]);
    // The offline model stays usable by name.
    expect(providers.embedder(LOCAL_EMBEDDING_MODEL).provider).toBe("local");
  });

  it("names each provider's missing setting", () => {
    const reason = (settings: Partial<EmbeddingSettings>) => new EmbeddingProviders({ ...LOCAL_EMBEDDING_SETTINGS, ...settings }).status().reason;
    expect(reason({ default_provider: "voyage" })).toBe("voyage.api_key is missing");
    expect(reason({ default_provider: "vertex" })).toBe("vertex.project is missing (or give vertex.api_key)");
    expect(reason({ default_provider: "vertex", vertex: { api_key: "AIza-test", location: "us-central1" } })).toBeNull();
    expect(reason({ default_provider: "vertex", vertex: { project: "p", location: "us-central1" } })).toBeNull();
  });

  it("answers 422 for unknown models and for models whose provider is not configured, listing what is available", () => {
    const providers = new EmbeddingProviders({ ...LOCAL_EMBEDDING_SETTINGS, default_provider: "openai", openai: { api_key: "sk-live-abcdef123456" } });
    expect(providers.available().map((m) => m.model)).toEqual(["text-embedding-3-small", "text-embedding-3-large", LOCAL_EMBEDDING_MODEL]);
    const unknown = thrown(() => providers.embedder("ada-002"));
    expect([unknown.status, unknown.detail]).toEqual([422, `unknown embedding model 'ada-002'; available: text-embedding-3-small, text-embedding-3-large, ${LOCAL_EMBEDDING_MODEL}`]);
    const unavailable = thrown(() => providers.embedder("voyage-3"));
    expect([unavailable.status, unavailable.detail]).toEqual([
      422,
      `embedding model 'voyage-3' is not available (voyage.api_key is missing); available: text-embedding-3-small, text-embedding-3-large, ${LOCAL_EMBEDDING_MODEL}`,
    ]);
    expect(providers.embedder("text-embedding-3-large").dims).toBe(3072);
  });

  it("honours default_model and keeps one embedder per model", () => {
    const providers = new EmbeddingProviders({ ...LOCAL_EMBEDDING_SETTINGS, default_provider: "vertex", default_model: "text-multilingual-embedding-002", vertex: { project: "p", location: "us-central1" } });
    expect(providers.status()).toMatchObject({ provider: "vertex", model: "text-multilingual-embedding-002", dims: 768, configured: true });
    expect(providers.embedder(null)).toBe(providers.embedder("text-multilingual-embedding-002"));
  });

  it("resolves a name served by both OpenAI and an OpenAI-compatible gateway to the default provider", () => {
    const settings: EmbeddingSettings = {
      ...LOCAL_EMBEDDING_SETTINGS,
      default_provider: "openai_compatible",
      openai: { api_key: "sk-live-abcdef123456" },
      openai_compatible: { base_url: "http://127.0.0.1:4000/v1", models: { "text-embedding-3-small": 1536 } },
    };
    expect(new EmbeddingProviders(settings).embedder("text-embedding-3-small").provider).toBe("openai_compatible");
    expect(new EmbeddingProviders({ ...settings, default_provider: "openai" }).embedder("text-embedding-3-small").provider).toBe("openai");
  });

  it("never reports a key in the status", () => {
    const providers = new EmbeddingProviders({ ...LOCAL_EMBEDDING_SETTINGS, default_provider: "voyage", voyage: { api_key: "pa-secret-value-987654" } });
    expect(JSON.stringify(providers.status())).not.toContain("pa-secret-value-987654");
  });
});

describe("request helpers", () => {
  it("reads Retry-After in milliseconds, seconds and as an HTTP date", () => {
    const headers = (entries: Record<string, string>) => new Headers(entries);
    expect(retryAfterMs(headers({ "retry-after-ms": "250", "retry-after": "9" }))).toBe(250);
    expect(retryAfterMs(headers({ "retry-after": "2" }))).toBe(2000);
    const date = retryAfterMs(headers({ "retry-after": new Date(Date.now() + 5000).toUTCString() }));
    expect(date).toBeGreaterThan(3000);
    expect(date).toBeLessThanOrEqual(5000);
    expect(retryAfterMs(headers({ "retry-after": "soon" }))).toBeNull();
    expect(retryAfterMs(headers({}))).toBeNull();
  });

  it("removes keys, bearer tokens and key-shaped strings from messages and keeps them short", () => {
    expect(safeMessage("bad key my-long-secret-key in\nrequest", ["my-long-secret-key"])).toBe("bad key [redacted] in request");
    expect(safeMessage("Authorization: Bearer abc.def.ghi failed", [])).toBe("Authorization: Bearer [redacted] failed");
    expect(safeMessage("Incorrect API key provided: sk-proj-ab***********yz12.", [])).toBe("Incorrect API key provided: [redacted]");
    expect(safeMessage("x".repeat(500), [])).toHaveLength(200);
  });

  it("cuts batches by count and by estimated tokens, keeping order and sending an oversized text alone", () => {
    expect(batchRanges(["a", "b", "c", "d", "e"], 2, 1000)).toEqual([
      [0, 2],
      [2, 4],
      [4, 5],
    ]);
    const big = "x".repeat(3000); // 1,001 estimated tokens
    expect(estimateTokens(big)).toBe(1001);
    expect(batchRanges(["a", big, big, "b"], 100, 1500)).toEqual([
      [0, 2],
      [2, 4],
    ]);
    expect(batchRanges([big + big, "a"], 100, 1000)).toEqual([
      [0, 1],
      [1, 2],
    ]);
    expect(batchRanges([], 10, 10)).toEqual([]);
  });
});
