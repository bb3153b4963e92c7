import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { resetRateLimits } from "@/lib/security/rate-limit";
import { LOCAL_EMBEDDING_SETTINGS, loadEmbeddingSettings } from "@/lib/config/embeddings";
import { EmbeddingProviders, embeddingProvidersSingleton } from "@/lib/embeddings";
import { FAST_BACKOFF, loopbackPerTest, sendJson } from "@/test/support/embedding-server";
import { call, tokenFor } from "@/test/helpers";
import { POST } from "./route";

const loopback = loopbackPerTest();
afterEach(async () => {
  embeddingProvidersSingleton.set(new EmbeddingProviders(LOCAL_EMBEDDING_SETTINGS));
  await resetRateLimits();
});

let analyst: string;
beforeAll(async () => {
  analyst = await tokenFor("acme", "analyst");
});

describe("an upstream embedding provider that keeps rate-limiting Quarry", () => {
  it("gives the search caller 429 with the provider's Retry-After, not 502", async () => {
    const provider = await loopback.start((_request, response) => sendJson(response, 429, { error: { message: "Rate limit reached for requests" } }, { "retry-after": "1" }));
    const settings = loadEmbeddingSettings({
      EMBEDDING_PROVIDER_CONFIG: JSON.stringify({ default_provider: "openai", openai: { api_key: "sk-loopback", base_url: `${provider.url}/v1` }, max_retries: 1 }),
    });
    embeddingProvidersSingleton.set(new EmbeddingProviders(settings, FAST_BACKOFF));
    const res = await call(POST, "POST", "/api/v1/documents/search", { token: analyst, body: { query: "loyalty points" } });
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(res.json.detail).toBe("embedding provider openai is rate-limiting requests: Rate limit reached for requests; retry in 1 s");
    // Quarry waited the asked second and tried again before giving up.
    expect(provider.requests).toHaveLength(2);
    expect(res.text).not.toContain("sk-loopback");
  });
});
