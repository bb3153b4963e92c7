import type { EmbeddingModelInfo, EmbeddingProviderName } from "@/lib/config/embedding-models";

export interface EmbedDocumentsOptions {
  signal?: AbortSignal;
  /** Called after each batch with texts embedded so far and the total. */
  onProgress?: (done: number, total: number) => void;
}

export interface Embedder {
  readonly provider: EmbeddingProviderName;
  readonly model: string;
  readonly dims: number;
  /** Batches to the API's limits; calls onProgress(doneTexts, totalTexts) after each batch. Returns one vector per text, same order. */
  embedDocuments(texts: string[], opts?: EmbedDocumentsOptions): Promise<number[][]>;
  embedQuery(text: string, opts?: { signal?: AbortSignal }): Promise<number[]>;
}

export interface EmbeddingStatus {
  provider: EmbeddingProviderName;
  model: string;
  dims: number;
  /** false => `reason` says why, e.g. "openai.api_key is missing". */
  configured: boolean;
  reason: string | null;
  /** Models usable now (their provider is configured). */
  available_models: EmbeddingModelInfo[];
  /** Set while the offline embedder is active (SPEC §7.3): it works with no setup, but matches words, not meaning. */
  notice: EmbeddingNotice | null;
}

export interface EmbeddingNotice {
  message: string;
  /** The environment variable that configures a real provider. */
  variable: "EMBEDDING_PROVIDER_CONFIG";
}
