import OpenAI from "openai";
import type { EmbeddingModelInfo } from "@/lib/config/embedding-models";
import { batchedEmbedder, callProvider, checkVectors, retryAfterMs, type ProviderFailure, type RequestPolicy } from "./retry";
import type { Embedder } from "./types";

/** OpenAI's documented limits for /v1/embeddings: 2,048 inputs and 300,000 tokens per request. */
export const OPENAI_MAX_INPUTS = 2048;
export const OPENAI_MAX_TOKENS_PER_REQUEST = 300_000;

export interface OpenAiConnection {
  baseURL: string;
  /** null: send no Authorization header (self-hosted OpenAI-compatible servers). */
  apiKey: string | null;
}

function describeOpenAiError(error: unknown): ProviderFailure {
  if (error instanceof OpenAI.APIError && error.status !== undefined) {
    const body = error.error as { message?: unknown } | undefined;
    const message = typeof body?.message === "string" ? body.message : error.message;
    return { status: error.status, message, retryAfterMs: retryAfterMs(error.headers) };
  }
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return { status: null, message: `${error instanceof Error ? error.message : String(error)}${cause}`, retryAfterMs: null };
}

/** OpenAI (provider "openai") or any server speaking its embeddings API (provider "openai_compatible"), through the official SDK. */
export function createOpenAiEmbedder(info: EmbeddingModelInfo, connection: OpenAiConnection, policy: RequestPolicy): Embedder {
  const client = new OpenAI({
    // The SDK refuses to start without a credential; the placeholder is never sent because the header is removed below.
    apiKey: connection.apiKey ?? "none",
    baseURL: connection.baseURL,
    // Explicit nulls keep OPENAI_ORG_ID / OPENAI_PROJECT_ID / OPENAI_ADMIN_KEY of the environment out: configuration comes from EMBEDDING_PROVIDER_CONFIG only.
    organization: null,
    project: null,
    adminAPIKey: null,
    defaultHeaders: connection.apiKey === null ? { Authorization: null } : undefined,
    // Retries and timeouts are ours (callProvider), the same for every provider; the SDK's own timeout sits behind ours so ours decides (504, not a network error).
    maxRetries: 0,
    timeout: policy.timeoutMs + 5_000,
  });
  const secrets = connection.apiKey === null ? [] : [connection.apiKey];

  // OpenAI embeds documents and queries alike.
  return batchedEmbedder(info, { maxItems: OPENAI_MAX_INPUTS, maxTokens: OPENAI_MAX_TOKENS_PER_REQUEST }, (input, _purpose, signal) =>
    callProvider({
      provider: info.provider,
      policy,
      signal,
      secrets,
      describe: describeOpenAiError,
      attempt: async (attemptSignal) => {
        const response = await client.embeddings.create({ model: info.model, input, encoding_format: "float" }, { signal: attemptSignal, maxRetries: 0 });
        // The API documents `index` on each item; order by it rather than trusting array order.
        const vectors = new Array<number[]>(input.length);
        for (const item of response.data) vectors[item.index] = item.embedding;
        return checkVectors(info.provider, Array.from(vectors), input.length, info.dims);
      },
    }),
  );
}
