import { GoogleAuth, gaxios, type GoogleAuthOptions } from "google-auth-library";
import { ProviderHttpError, postJson } from "./http";
import type { EmbeddingModelInfo } from "@/lib/config/embedding-models";
import { batchedEmbedder, callProvider, checkVectors, type EmbedPurpose, type ProviderFailure, type RequestPolicy } from "./retry";
import type { Embedder } from "./types";

/** Vertex AI text-embedding models: at most 250 instances and 20,000 input tokens per request (longer single inputs are truncated to 2,048 tokens by the API). */
export const VERTEX_MAX_INSTANCES = 250;
export const VERTEX_MAX_TOKENS_PER_REQUEST = 20_000;
const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";
const TASK_TYPES: Record<EmbedPurpose, string> = { document: "RETRIEVAL_DOCUMENT", query: "RETRIEVAL_QUERY" };

export interface VertexConnection {
  /** Required with OAuth credentials; optional with an API key (express mode). */
  project: string | undefined;
  location: string;
  /** Service-account key file; undefined = Application Default Credentials (workload identity, metadata server). */
  credentialsFile: string | undefined;
  /** An API key instead of OAuth credentials, sent as `x-goog-api-key`. */
  apiKey: string | undefined;
  /** Default https://{location}-aiplatform.googleapis.com, or https://aiplatform.googleapis.com in express mode. */
  apiEndpoint: string | undefined;
}

const EXPRESS_MODE_ENDPOINT = "https://aiplatform.googleapis.com";

/**
 * The model's :predict URL. With a project: {endpoint}/v1/projects/{p}/locations/{l}/publishers/google/models/{m}:predict.
 * An API key without a project is Vertex AI express mode, whose resources carry neither project nor location:
 * https://aiplatform.googleapis.com/v1/publishers/google/models/{m}:predict.
 */
function vertexPredictUrl(connection: VertexConnection, model: string): string {
  const modelPath = `publishers/google/models/${encodeURIComponent(model)}:predict`;
  if (connection.project === undefined) {
    return `${(connection.apiEndpoint ?? EXPRESS_MODE_ENDPOINT).replace(/\/+$/, "")}/v1/${modelPath}`;
  }
  const endpoint = (connection.apiEndpoint ?? `https://${connection.location}-aiplatform.googleapis.com`).replace(/\/+$/, "");
  return `${endpoint}/v1/projects/${encodeURIComponent(connection.project)}/locations/${encodeURIComponent(connection.location)}/${modelPath}`;
}

function describeVertexError(error: unknown): ProviderFailure {
  if (error instanceof ProviderHttpError) return error.failure();
  if (error instanceof gaxios.GaxiosError) {
    // The OAuth token exchange failed: report the token endpoint's status, and do not retry a refused credential.
    const data = error.response?.data as { error?: unknown; error_description?: unknown } | undefined;
    const reason = typeof data?.error_description === "string" ? data.error_description : typeof data?.error === "string" ? data.error : error.message;
    const status = error.response?.status ?? null;
    return { status, message: `credentials: ${reason}`, retryAfterMs: null, permanent: status !== null && status < 500 && status !== 429 };
  }
  const message = error instanceof Error ? error.message : String(error);
  // google-auth-library's "Could not load the default credentials" and unreadable key files: configuration, not weather.
  const permanent = /credentials|key file|ENOENT|private key/i.test(message);
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
  return { status: null, message: permanent ? `credentials: ${message}` : `${message}${cause}`, retryAfterMs: null, permanent };
}

/** Resolves with `promise` unless `signal` aborts first (google-auth-library's token fetch takes no signal). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

interface PredictResponse {
  predictions?: { embeddings?: { values?: number[] } }[];
}

/**
 * Vertex AI text embeddings over REST: POST {vertexPredictUrl} with `instances: [{content, task_type}]`,
 * authorised by an API key (`x-goog-api-key`) or by google-auth-library (a key file or ADC).
 * `authOptions` lets tests give the OAuth client a transport of their own; production passes none.
 */
export function createVertexEmbedder(info: EmbeddingModelInfo, connection: VertexConnection, policy: RequestPolicy, authOptions: GoogleAuthOptions = {}): Embedder {
  const apiKey = connection.apiKey;
  const auth = apiKey ? null : new GoogleAuth({ scopes: [CLOUD_PLATFORM_SCOPE], keyFilename: connection.credentialsFile, ...authOptions });
  const url = vertexPredictUrl(connection, info.model);
  // In a header rather than `?key=`, so the key stays out of URLs that proxies and error messages repeat.
  const requestHeaders = async (signal: AbortSignal): Promise<HeadersInit> =>
    auth ? await untilAborted(auth.getRequestHeaders(url), signal) : { "x-goog-api-key": apiKey! };

  return batchedEmbedder(info, { maxItems: VERTEX_MAX_INSTANCES, maxTokens: VERTEX_MAX_TOKENS_PER_REQUEST }, (texts, purpose, signal) =>
    callProvider({
      provider: "vertex",
      policy,
      signal,
      secrets: apiKey ? [apiKey] : [],
      describe: describeVertexError,
      attempt: async (attemptSignal) => {
        // OAuth tokens are cached by the library until shortly before expiry; a fresh exchange only when needed.
        const authHeaders = await requestHeaders(attemptSignal);
        const body = await postJson<PredictResponse & { error?: { message?: unknown } }>(
          url,
          { headers: authHeaders, body: { instances: texts.map((content) => ({ content, task_type: TASK_TYPES[purpose] })), parameters: { autoTruncate: true } }, signal: attemptSignal },
          (error) => error?.error?.message,
        );
        const vectors = (body?.predictions ?? []).map((p) => p.embeddings?.values as number[]);
        return checkVectors("vertex", vectors, texts.length, info.dims);
      },
    }),
  );
}
