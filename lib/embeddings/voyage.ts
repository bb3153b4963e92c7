import { ProviderHttpError, postJson } from "./http";
import type { EmbeddingModelInfo } from "@/lib/config/embedding-models";
import { batchedEmbedder, callProvider, checkVectors, type ProviderFailure, type RequestPolicy } from "./retry";
import type { Embedder } from "./types";

/** Voyage's per-request limit on the input list as its API reference for these models states it ("The maximum length of the list is 128"). */
export const VOYAGE_MAX_INPUTS = 128;
/** Documented total-token limits per request for the three models. */
export const VOYAGE_MAX_TOKENS_PER_REQUEST: Record<string, number> = {
  "voyage-3": 320_000,
  "voyage-3-lite": 1_000_000,
  "voyage-code-3": 120_000,
};
export const VOYAGE_DEFAULT_BASE_URL = "https://api.voyageai.com/v1";

function describeVoyageError(error: unknown): ProviderFailure {
  if (error instanceof ProviderHttpError) return error.failure();
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return { status: null, message: `${error instanceof Error ? error.message : String(error)}${cause}`, retryAfterMs: null };
}

interface VoyageEmbedResponse {
  data?: { embedding?: number[]; index?: number }[];
}

/**
 * Voyage AI over its documented REST API: POST {base}/embeddings with `{input, model, input_type}`,
 * "document" for chunks and "query" for questions. Plain fetch rather than the `voyageai` SDK: the SDK
 * bundles an optional dynamic import of @huggingface/transformers (for its on-device models) that the
 * Next.js server bundle would have to resolve, for no gain over this one request.
 */
export function createVoyageEmbedder(info: EmbeddingModelInfo, connection: { apiKey: string; baseUrl: string }, policy: RequestPolicy): Embedder {
  const url = `${connection.baseUrl.replace(/\/+$/, "")}/embeddings`;
  const maxTokens = VOYAGE_MAX_TOKENS_PER_REQUEST[info.model] ?? 120_000;

  return batchedEmbedder(info, { maxItems: VOYAGE_MAX_INPUTS, maxTokens }, (input, inputType, signal) =>
    callProvider({
      provider: "voyage",
      policy,
      signal,
      secrets: [connection.apiKey],
      describe: describeVoyageError,
      attempt: async (attemptSignal) => {
        const body = await postJson<VoyageEmbedResponse & { detail?: unknown }>(
          url,
          { headers: { authorization: `Bearer ${connection.apiKey}` }, body: { input, model: info.model, input_type: inputType }, signal: attemptSignal },
          // Voyage answers errors as {"detail": "..."}.
          (error) => error?.detail,
        );
        const vectors = new Array<number[]>(input.length);
        for (const item of body?.data ?? []) if (typeof item.index === "number" && item.embedding) vectors[item.index] = item.embedding;
        return checkVectors("voyage", Array.from(vectors), input.length, info.dims);
      },
    }),
  );
}
