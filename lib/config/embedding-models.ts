/** Names of the embedding providers Quarry can call (SPEC §2.9 plus any OpenAI-compatible server and the offline default). */
export const EMBEDDING_PROVIDERS = ["openai", "vertex", "voyage", "openai_compatible", "local"] as const;
export type EmbeddingProviderName = (typeof EMBEDDING_PROVIDERS)[number];

export interface EmbeddingModelInfo {
  provider: EmbeddingProviderName;
  model: string;
  dims: number;
}

/** What the search panel and GET …/embedding-config say while the offline embedder is active (SPEC §7.3). */
export const OFFLINE_EMBEDDER_NOTICE = "no embedding provider configured: offline word-matching embedder in use";

/** The offline embedder's model name; the version suffix changes whenever its vectors would change. */
export const LOCAL_EMBEDDING_MODEL = "quarry-local-hash-v1";
export const LOCAL_EMBEDDING_DIMS = 384;

/** Models of the fixed-catalogue providers (SPEC §2.9), the provider's default first. */
export const BUILT_IN_MODELS: readonly EmbeddingModelInfo[] = [
  { provider: "openai", model: "text-embedding-3-small", dims: 1536 },
  { provider: "openai", model: "text-embedding-3-large", dims: 3072 },
  { provider: "vertex", model: "text-embedding-005", dims: 768 },
  { provider: "vertex", model: "text-embedding-004", dims: 768 },
  { provider: "vertex", model: "text-multilingual-embedding-002", dims: 768 },
  { provider: "voyage", model: "voyage-3", dims: 1024 },
  { provider: "voyage", model: "voyage-3-lite", dims: 512 },
  { provider: "voyage", model: "voyage-code-3", dims: 1024 },
  { provider: "local", model: LOCAL_EMBEDDING_MODEL, dims: LOCAL_EMBEDDING_DIMS },
];

/** Every model a configuration can name: the built-in catalogue plus the OpenAI-compatible server's declared models. */
export function modelCatalogue(compatibleModels: Record<string, number> | undefined): EmbeddingModelInfo[] {
  const compatible = Object.entries(compatibleModels ?? {}).map(([model, dims]) => ({ provider: "openai_compatible" as const, model, dims }));
  return [...BUILT_IN_MODELS, ...compatible];
}
