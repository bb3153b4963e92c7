import "server-only";
import { z } from "zod";
import { BUILT_IN_MODELS, EMBEDDING_PROVIDERS, modelCatalogue } from "@/lib/config/embedding-models";
import { ConfigError, jsonEnv } from "./schema";
import { processSingleton } from "@/lib/process-singleton";

// Sections are strict so that a misspelt field (`apikey`) fails the start instead of silently leaving a provider unconfigured.
// A missing credential is not a shape error: the provider then reports "not configured" with the reason (SPEC §7.3).

const OpenAiSettings = z.strictObject({
  api_key: z.string().min(1).optional(),
  /** Another OpenAI endpoint (Azure-style proxy, regional gateway); default https://api.openai.com/v1. */
  base_url: z.url().optional(),
});

const VertexSettings = z.strictObject({
  /**
   * A Google Cloud API key, instead of service-account credentials (SPEC §2.9 `<provider_n>.api_key`). Sent as
   * `x-goog-api-key`; with `project` against the project's regional endpoint (a key bound to a service account),
   * without it against Vertex AI express mode's global endpoint https://aiplatform.googleapis.com.
   */
  api_key: z.string().min(1).optional(),
  project: z.string().min(1).optional(),
  location: z.string().regex(/^[a-z0-9-]+$/, "must be a region name such as us-central1").default("us-central1"),
  /** Service-account key file; without it Application Default Credentials apply (workload identity, metadata server, GOOGLE_APPLICATION_CREDENTIALS). */
  credentials_file: z.string().min(1).optional(),
  /** Default https://{location}-aiplatform.googleapis.com. */
  api_endpoint: z.url().optional(),
});

const VoyageSettings = z.strictObject({
  api_key: z.string().min(1).optional(),
  /** Default https://api.voyageai.com/v1. */
  base_url: z.url().optional(),
});

const CompatibleSettings = z.strictObject({
  /** The server's OpenAI-style base URL, e.g. http://127.0.0.1:11434/v1 (Ollama) or a vLLM/TEI/LiteLLM endpoint. */
  base_url: z.url(),
  /** Optional: many self-hosted servers need none. */
  api_key: z.string().min(1).optional(),
  /** Model name → vector dimension; the first one is the provider's default model. */
  models: z
    .record(z.string().min(1), z.number().int().min(1).max(16_000))
    .refine((models) => Object.keys(models).length > 0, "must name at least one model with its dimension"),
});

/** 30 s: a 2,048-input OpenAI batch of 500-word chunks answers well inside it; a hung connection does not hold an index job for long. */
export const DEFAULT_EMBEDDING_TIMEOUT_MS = 30_000;
/** 4 retries with exponential backoff span roughly 15 s of waiting, enough for a short rate-limit window. */
export const DEFAULT_EMBEDDING_MAX_RETRIES = 4;

export const EmbeddingSettings = z
  .strictObject({
    default_provider: z.enum(EMBEDDING_PROVIDERS),
    default_model: z.string().min(1).nullable().default(null),
    openai: OpenAiSettings.optional(),
    vertex: VertexSettings.optional(),
    voyage: VoyageSettings.optional(),
    openai_compatible: CompatibleSettings.optional(),
    request_timeout_ms: z.number().int().min(100).max(600_000).default(DEFAULT_EMBEDDING_TIMEOUT_MS),
    max_retries: z.number().int().min(0).max(10).default(DEFAULT_EMBEDDING_MAX_RETRIES),
  })
  .superRefine((settings, ctx) => {
    if (settings.vertex?.api_key && settings.vertex.credentials_file) {
      ctx.addIssue({ code: "custom", path: ["vertex"], message: "give either api_key or credentials_file, not both" });
    }
    if (settings.default_provider === "openai_compatible" && !settings.openai_compatible) {
      ctx.addIssue({ code: "custom", path: ["openai_compatible"], message: "is required when default_provider is openai_compatible (base_url and models)" });
    }
    const catalogue = modelCatalogue(settings.openai_compatible?.models);
    for (const [model, dims] of Object.entries(settings.openai_compatible?.models ?? {})) {
      // The same name must mean the same vectors: stored chunks are keyed by model name alone.
      const builtIn = BUILT_IN_MODELS.find((m) => m.model === model);
      if (builtIn && builtIn.dims !== dims) {
        ctx.addIssue({ code: "custom", path: ["openai_compatible", "models", model], message: `${builtIn.provider} model '${model}' has ${builtIn.dims} dimensions, not ${dims}` });
      }
    }
    if (settings.default_model !== null) {
      const ofProvider = catalogue.filter((m) => m.provider === settings.default_provider).map((m) => m.model);
      if (!ofProvider.includes(settings.default_model)) {
        ctx.addIssue({
          code: "custom",
          path: ["default_model"],
          message: `'${settings.default_model}' is not a model of ${settings.default_provider}; known: ${ofProvider.join(", ")}`,
        });
      }
    }
  });
export type EmbeddingSettings = z.output<typeof EmbeddingSettings>;

/** Unset variable: the offline embedder, always configured. */
export const LOCAL_EMBEDDING_SETTINGS: EmbeddingSettings = {
  default_provider: "local",
  default_model: null,
  request_timeout_ms: DEFAULT_EMBEDDING_TIMEOUT_MS,
  max_retries: DEFAULT_EMBEDDING_MAX_RETRIES,
};

/** Parses EMBEDDING_PROVIDER_CONFIG; throws ConfigError naming the variable and field. */
export function loadEmbeddingSettings(env: Record<string, string | undefined>): EmbeddingSettings {
  const parsed = jsonEnv("EMBEDDING_PROVIDER_CONFIG", EmbeddingSettings).safeParse(env.EMBEDDING_PROVIDER_CONFIG);
  if (!parsed.success) throw new ConfigError(`Invalid configuration:\n  ${parsed.error.issues.map((i) => i.message).join("\n  ")}`);
  return parsed.data ?? LOCAL_EMBEDDING_SETTINGS;
}

/** Embedding configuration, parsed once per process (a change needs a restart, SPEC §2.9). */
const embeddingSettingsSingleton = processSingleton("embeddingSettings", () => loadEmbeddingSettings(process.env));

export const embeddingSettings = (): EmbeddingSettings => embeddingSettingsSingleton.get();
