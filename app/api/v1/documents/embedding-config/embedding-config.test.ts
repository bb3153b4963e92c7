import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_EMBEDDING_SETTINGS, loadEmbeddingSettings, type EmbeddingSettings } from "@/lib/config/embeddings";
import { EmbeddingProviders, embeddingProvidersSingleton } from "@/lib/embeddings";
import { call, tokenFor } from "@/test/helpers";
import { GET } from "./route";

/** The process's embedding configuration as a start with these settings would make it. */
const useSettings = (settings: EmbeddingSettings) => embeddingProvidersSingleton.set(new EmbeddingProviders(settings));
afterEach(() => useSettings(LOCAL_EMBEDDING_SETTINGS));

let analyst: string;
beforeAll(async () => {
  analyst = await tokenFor("acme", "analyst");
});

describe("GET /api/v1/documents/embedding-config: the offline default shown for what it is (SPEC §7.3)", () => {
  it("with EMBEDDING_PROVIDER_CONFIG unset reports the offline word-matching embedder and the variable to set", async () => {
    useSettings(loadEmbeddingSettings({}));
    const res = await call(GET, "GET", "/api/v1/documents/embedding-config", { token: analyst });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      provider: "local",
      configured: true,
      notice: { message: "no embedding provider configured: offline word-matching embedder in use", variable: "EMBEDDING_PROVIDER_CONFIG" },
    });
  });

  it("with a provider configured carries no notice", async () => {
    useSettings(loadEmbeddingSettings({ EMBEDDING_PROVIDER_CONFIG: JSON.stringify({ default_provider: "openai", openai: { api_key: "sk-test-0000" } }) }));
    const res = await call(GET, "GET", "/api/v1/documents/embedding-config", { token: analyst });
    expect(res.json).toMatchObject({ provider: "openai", configured: true, notice: null });
    expect(res.text).not.toContain("sk-test-0000");
  });

  it("with a provider selected but lacking its key says not configured, not the offline notice", async () => {
    useSettings(loadEmbeddingSettings({ EMBEDDING_PROVIDER_CONFIG: JSON.stringify({ default_provider: "voyage" }) }));
    const res = await call(GET, "GET", "/api/v1/documents/embedding-config", { token: analyst });
    expect(res.json).toMatchObject({ provider: "voyage", configured: false, reason: "voyage.api_key is missing", notice: null });
  });

  it("needs a signed-in caller", async () => {
    expect((await call(GET, "GET", "/api/v1/documents/embedding-config")).status).toBe(401);
  });
});
