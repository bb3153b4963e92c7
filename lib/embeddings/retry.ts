import { DomainError, RateLimited, UpstreamFailed, TimedOut } from "@/lib/errors";
import { log } from "@/lib/log";
import type { EmbeddingModelInfo, EmbeddingProviderName } from "@/lib/config/embedding-models";
import type { Embedder } from "./types";

export interface RequestPolicy {
  /** Limit for one HTTP attempt; a hung connection is aborted after it. */
  timeoutMs: number;
  /** Retries after the first attempt, on 429, 5xx, network errors and timeouts. */
  maxRetries: number;
  /** Backoff before retry n is a random delay in [0, min(max, base * 2^n)] ("full jitter"), unless the server sent Retry-After. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** A Retry-After longer than this fails the call instead of holding an index job. */
  maxRetryAfterMs: number;
}

export const DEFAULT_BACKOFF = { backoffBaseMs: 500, backoffMaxMs: 20_000, maxRetryAfterMs: 60_000 } as const;

/** What one failed attempt amounts to, as each provider's client reports it. */
export interface ProviderFailure {
  /** HTTP status, or null when no response arrived (connection refused, reset, DNS). */
  status: number | null;
  message: string;
  retryAfterMs: number | null;
  /** A failure no retry can fix (missing credentials); fails at once. */
  permanent?: boolean;
}

/** Retry-After as OpenAI (`retry-after-ms`) and RFC 9110 (`retry-after`: seconds or an HTTP date) send it. */
export function retryAfterMs(headers: { get(name: string): string | null } | undefined): number | null {
  if (!headers) return null;
  const ms = Number(headers.get("retry-after-ms"));
  if (headers.get("retry-after-ms") !== null && Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers.get("retry-after");
  if (value === null || value.trim() === "") return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

const BEARER = /\bBearer\s+\S+/gi;
// OpenAI echoes a masked form of a wrong key ("sk-abc***xyz"); drop anything shaped like a key.
const KEY_LIKE = /\b(?:sk|pa|pk|rk)-[A-Za-z0-9_*.-]{4,}/g;

/** One line of at most 200 characters with every secret removed, safe for a `detail` and a log. */
export function safeMessage(message: string, secrets: readonly string[]): string {
  let text = message.replace(/\s+/g, " ").trim();
  for (const secret of secrets) if (secret.length > 0) text = text.split(secret).join("[redacted]");
  text = text.replace(BEARER, "Bearer [redacted]").replace(KEY_LIKE, "[redacted]");
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

function retryable(status: number | null): boolean {
  return status === null || status === 429 || status >= 500;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export interface ProviderCall<T> {
  provider: EmbeddingProviderName;
  policy: RequestPolicy;
  /** The caller's signal: aborting it stops at once, without retries, rethrowing its reason. */
  signal: AbortSignal | undefined;
  /** Keys and tokens that must never reach an error message or a log line. */
  secrets: readonly string[];
  attempt: (signal: AbortSignal) => Promise<T>;
  describe: (error: unknown) => ProviderFailure;
}

/**
 * Runs one provider request with a per-attempt timeout and retries. Failures end as
 * UpstreamFailed (502, "embedding provider <name> failed: <status> <message>"), timeouts as TimedOut (504),
 * and a provider still rate-limiting after the retries as RateLimited (429) with Retry-After (SPEC §7.2):
 * the caller can do what Quarry did, wait and ask again, which a 502 would not tell it.
 */
export async function callProvider<T>({ provider, policy, signal, secrets, attempt, describe }: ProviderCall<T>): Promise<T> {
  for (let n = 0; ; n++) {
    const timeout = AbortSignal.timeout(policy.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let failure: ProviderFailure;
    let timedOut = false;
    try {
      return await attempt(combined);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof DomainError) throw error;
      timedOut = timeout.aborted;
      failure = timedOut ? { status: null, message: "timed out", retryAfterMs: null } : describe(error);
    }
    const message = safeMessage(failure.message, secrets);
    const tooLong = failure.retryAfterMs !== null && failure.retryAfterMs > policy.maxRetryAfterMs;
    if (n >= policy.maxRetries || failure.permanent || !retryable(failure.status) || tooLong) {
      if (timedOut) throw new TimedOut(`embedding provider ${provider} timed out after ${policy.timeoutMs} ms (${n + 1} attempts)`);
      if (failure.status === 429) throw providerRateLimited(provider, message, failure.retryAfterMs ?? nextBackoffMs(policy, n + 1));
      const status = failure.status ?? "network error";
      const suffix = tooLong ? ` (asked to retry after ${Math.ceil((failure.retryAfterMs ?? 0) / 1000)} s)` : "";
      throw new UpstreamFailed(`embedding provider ${provider} failed: ${status} ${message}${suffix}`);
    }
    const delay = failure.retryAfterMs ?? Math.random() * nextBackoffMs(policy, n);
    log.warn("embedding request failed, retrying", { provider, status: failure.status ?? (timedOut ? "timeout" : "network"), attempt: n + 1, delayMs: Math.round(delay), message });
    await sleep(delay, signal);
  }
}

/** The longest full-jitter wait before retry n. */
function nextBackoffMs(policy: RequestPolicy, n: number): number {
  return Math.min(policy.backoffMaxMs, policy.backoffBaseMs * 2 ** n);
}

/**
 * 429 for a provider that kept rate-limiting: Retry-After is the provider's own when it sent one,
 * else the wait the next backoff step would have taken; whole seconds, at least 1.
 */
function providerRateLimited(provider: EmbeddingProviderName, message: string, retryAfterMs: number): RateLimited {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new RateLimited(seconds, `embedding provider ${provider} is rate-limiting requests: ${message}; retry in ${seconds} s`);
}

/** Splits texts into consecutive batches of at most `maxItems` texts and about `maxTokens` estimated tokens (a longer text goes alone). */
export function batchRanges(texts: readonly string[], maxItems: number, maxTokens: number): [number, number][] {
  const ranges: [number, number][] = [];
  let start = 0;
  let tokens = 0;
  for (let i = 0; i < texts.length; i++) {
    const estimate = estimateTokens(texts[i]);
    if (i > start && (i - start >= maxItems || tokens + estimate > maxTokens)) {
      ranges.push([start, i]);
      start = i;
      tokens = 0;
    }
    tokens += estimate;
  }
  if (start < texts.length) ranges.push([start, texts.length]);
  return ranges;
}

/**
 * Upper estimate of a text's tokens without the provider's tokenizer: UTF-8 bytes / 3. English BPE
 * averages about 4 bytes a token, CJK about 3; overestimating only makes batches smaller.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, "utf8") / 3) + 1;
}

/** Runs `embedBatch` over the batches in order, reporting progress after each. */
async function embedInBatches(
  texts: string[],
  ranges: [number, number][],
  embedBatch: (batch: string[]) => Promise<number[][]>,
  onProgress: ((done: number, total: number) => void) | undefined,
): Promise<number[][]> {
  const vectors: number[][] = [];
  for (const [start, end] of ranges) {
    const batch = await embedBatch(texts.slice(start, end));
    vectors.push(...batch);
    onProgress?.(end, texts.length);
  }
  return vectors;
}

/** Stored passages or a search question: Voyage (input_type) and Vertex (task_type) embed the two differently. */
export type EmbedPurpose = "document" | "query";

/**
 * An Embedder over one provider request, `embedBatch`: documents go in consecutive batches of at most
 * `maxItems` texts and about `maxTokens` tokens, with progress after each; a query goes alone.
 */
export function batchedEmbedder(
  info: EmbeddingModelInfo,
  limits: { maxItems: number; maxTokens: number },
  embedBatch: (texts: string[], purpose: EmbedPurpose, signal: AbortSignal | undefined) => Promise<number[][]>,
): Embedder {
  return {
    provider: info.provider,
    model: info.model,
    dims: info.dims,
    embedDocuments(texts, opts) {
      const ranges = batchRanges(texts, limits.maxItems, limits.maxTokens);
      return embedInBatches(texts, ranges, (batch) => embedBatch(batch, "document", opts?.signal), opts?.onProgress);
    },
    async embedQuery(text, opts) {
      const [vector] = await embedBatch([text], "query", opts?.signal);
      return vector;
    },
  };
}

/** Checks a provider's answer before it reaches the index: one vector per input, each of the model's dimension. */
export function checkVectors(provider: EmbeddingProviderName, vectors: number[][], expectedCount: number, dims: number): number[][] {
  if (vectors.length !== expectedCount) throw new UpstreamFailed(`embedding provider ${provider} failed: returned ${vectors.length} vectors for ${expectedCount} texts`);
  for (const vector of vectors) {
    if (!Array.isArray(vector) || vector.length !== dims) {
      throw new UpstreamFailed(`embedding provider ${provider} failed: returned a vector of ${Array.isArray(vector) ? vector.length : "no"} dimensions, expected ${dims}`);
    }
    if (!vector.every(Number.isFinite)) throw new UpstreamFailed(`embedding provider ${provider} failed: returned a vector with non-numeric values`);
  }
  return vectors;
}
