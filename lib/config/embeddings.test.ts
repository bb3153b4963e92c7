import { describe, expect, it } from "vitest";
import { DEFAULT_EMBEDDING_MAX_RETRIES, DEFAULT_EMBEDDING_TIMEOUT_MS, LOCAL_EMBEDDING_SETTINGS, loadEmbeddingSettings } from "./embeddings";

const load = (value: unknown) => loadEmbeddingSettings({ EMBEDDING_PROVIDER_CONFIG: typeof value === "string" ? value : JSON.stringify(value) });

describe("EMBEDDING_PROVIDER_CONFIG", () => {
  it("defaults to the local embedder when unset or blank", () => {
    expect(loadEmbeddingSettings({})).toEqual(LOCAL_EMBEDDING_SETTINGS);
    expect(load("   ")).toEqual(LOCAL_EMBEDDING_SETTINGS);
    expect(LOCAL_EMBEDDING_SETTINGS).toEqual({ default_provider: "local", default_model: null, request_timeout_ms: DEFAULT_EMBEDDING_TIMEOUT_MS, max_retries: DEFAULT_EMBEDDING_MAX_RETRIES });
  });

  it("parses every provider section, filling defaults", () => {
    const settings = load({
      default_provider: "voyage",
      default_model: "voyage-3-lite",
      openai: { api_key: "sk-1", base_url: "https://gateway.example/v1" },
      vertex: { project: "p", credentials_file: "/secrets/sa.json" },
      voyage: { api_key: "pa-1" },
      openai_compatible: { base_url: "http://127.0.0.1:11434/v1", models: { "nomic-embed-text": 768 } },
      request_timeout_ms: 5000,
      max_retries: 0,
    });
    expect(settings).toEqual({
      default_provider: "voyage",
      default_model: "voyage-3-lite",
      openai: { api_key: "sk-1", base_url: "https://gateway.example/v1" },
      vertex: { project: "p", location: "us-central1", credentials_file: "/secrets/sa.json" },
      voyage: { api_key: "pa-1" },
      openai_compatible: { base_url: "http://127.0.0.1:11434/v1", models: { "nomic-embed-text": 768 } },
      request_timeout_ms: 5000,
      max_retries: 0,
    });
  });

  it("accepts a Vertex API key instead of service-account credentials, but not both", () => {
    expect(load({ default_provider: "vertex", vertex: { api_key: "AIza-key" } }).vertex).toEqual({ api_key: "AIza-key", location: "us-central1" });
    expect(load({ default_provider: "vertex", vertex: { api_key: "AIza-key", project: "p", location: "europe-west4" } }).vertex).toMatchObject({ api_key: "AIza-key", project: "p" });
    expect(() => load({ default_provider: "vertex", vertex: { api_key: "AIza-key", credentials_file: "/secrets/sa.json" } })).toThrow(
      "EMBEDDING_PROVIDER_CONFIG.vertex: give either api_key or credentials_file, not both",
    );
  });

  it("accepts a selected provider without its key: that is 'not configured', not a start failure", () => {
    expect(load({ default_provider: "openai" })).toMatchObject({ default_provider: "openai", default_model: null });
    expect(load({ default_provider: "vertex", vertex: {} }).vertex).toEqual({ location: "us-central1" });
  });

  it("accepts an OpenAI-compatible model reusing a built-in name only with the same dimension", () => {
    expect(load({ default_provider: "openai_compatible", openai_compatible: { base_url: "http://127.0.0.1:4000/v1", models: { "text-embedding-3-small": 1536 } } }).default_provider).toBe(
      "openai_compatible",
    );
    expect(() => load({ default_provider: "openai_compatible", openai_compatible: { base_url: "http://127.0.0.1:4000/v1", models: { "text-embedding-3-small": 768 } } })).toThrow(
      "EMBEDDING_PROVIDER_CONFIG.openai_compatible.models.text-embedding-3-small: openai model 'text-embedding-3-small' has 1536 dimensions, not 768",
    );
  });

  it("fails the start naming the variable and the field", () => {
    const cases: [unknown, string | RegExp][] = [
      ["{default_provider: openai}", /EMBEDDING_PROVIDER_CONFIG is not valid JSON/],
      [{ default_provider: "cohere" }, /EMBEDDING_PROVIDER_CONFIG\.default_provider: Invalid option: expected one of "openai"\|"vertex"\|"voyage"\|"openai_compatible"\|"local"/],
      [{}, /EMBEDDING_PROVIDER_CONFIG\.default_provider/],
      [{ default_provider: "openai", openai: { apikey: "sk-1" } }, /EMBEDDING_PROVIDER_CONFIG\.openai: Unrecognized key: "apikey"/],
      [{ default_provider: "openai", openai: { base_url: "not a url" } }, /EMBEDDING_PROVIDER_CONFIG\.openai\.base_url/],
      [{ default_provider: "openai", default_model: "voyage-3" }, "EMBEDDING_PROVIDER_CONFIG.default_model: 'voyage-3' is not a model of openai; known: text-embedding-3-small, text-embedding-3-large"],
      [{ default_provider: "openai_compatible" }, /EMBEDDING_PROVIDER_CONFIG\.openai_compatible: is required when default_provider is openai_compatible/],
      [{ default_provider: "local", openai_compatible: { base_url: "http://x/v1", models: {} } }, /EMBEDDING_PROVIDER_CONFIG\.openai_compatible\.models: must name at least one model/],
      [{ default_provider: "local", openai_compatible: { base_url: "http://x/v1", models: { m: 0 } } }, /EMBEDDING_PROVIDER_CONFIG\.openai_compatible\.models\.m/],
      [{ default_provider: "vertex", vertex: { location: "us central" } }, /EMBEDDING_PROVIDER_CONFIG\.vertex\.location: must be a region name/],
      [{ default_provider: "local", max_retries: 50 }, /EMBEDDING_PROVIDER_CONFIG\.max_retries/],
      [{ default_provider: "local", request_timeout_ms: 5 }, /EMBEDDING_PROVIDER_CONFIG\.request_timeout_ms/],
      [{ default_provider: "local", extra: true }, /EMBEDDING_PROVIDER_CONFIG\.\(root\): Unrecognized key: "extra"/],
    ];
    for (const [value, message] of cases) expect(() => load(value), JSON.stringify(value)).toThrow(message);
  });
});
