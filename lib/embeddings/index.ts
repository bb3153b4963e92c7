import fs from "node:fs";
import type { GoogleAuthOptions } from "google-auth-library";
import { embeddingSettings, type EmbeddingSettings } from "@/lib/config/embeddings";
import { Invalid, Unavailable } from "@/lib/errors";
import { localEmbedder } from "./local";
import { EMBEDDING_PROVIDERS, LOCAL_EMBEDDING_MODEL, OFFLINE_EMBEDDER_NOTICE, modelCatalogue, type EmbeddingModelInfo, type EmbeddingProviderName } from "@/lib/config/embedding-models";
import { createOpenAiEmbedder } from "./openai";
import { DEFAULT_BACKOFF, type RequestPolicy } from "./retry";
import type { Embedder, EmbeddingStatus } from "./types";
import { createVertexEmbedder } from "./vertex";
import { VOYAGE_DEFAULT_BASE_URL, createVoyageEmbedder } from "./voyage";
import { processSingleton } from "@/lib/process-singleton";

export { EMBEDDING_PROVIDERS, LOCAL_EMBEDDING_MODEL };
export type { Embedder, EmbeddingModelInfo, EmbeddingProviderName, EmbeddingStatus };

const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** Why a provider cannot be used with these settings, or null when it can. */
function providerProblem(settings: EmbeddingSettings, provider: EmbeddingProviderName): string | null {
  switch (provider) {
    case "local":
      return null;
    case "openai":
      return settings.openai?.api_key ? null : "openai.api_key is missing";
    case "voyage":
      return settings.voyage?.api_key ? null : "voyage.api_key is missing";
    case "openai_compatible":
      return settings.openai_compatible ? null : "openai_compatible.base_url is missing";
    case "vertex": {
      // Express mode needs no project: the API key names it.
      if (settings.vertex?.api_key) return null;
      if (!settings.vertex?.project) return "vertex.project is missing (or give vertex.api_key)";
      const file = settings.vertex.credentials_file;
      if (file !== undefined && !fs.existsSync(file)) return "vertex.credentials_file does not exist";
      return null;
    }
  }
}

/** Extra knobs for tests: faster backoff, and an OAuth transport for Vertex. */
export interface EmbeddingProviderOptions {
  backoff?: Partial<Omit<RequestPolicy, "timeoutMs" | "maxRetries">>;
  vertexAuth?: GoogleAuthOptions;
}

/**
 * The embedding models one configuration offers: status for the API, and embedders built on
 * first use and kept (clients hold connection pools and Vertex's cached OAuth token).
 */
export class EmbeddingProviders {
  private readonly catalogue: EmbeddingModelInfo[];
  private readonly embedders = new Map<string, Embedder>();
  private readonly policy: RequestPolicy;

  constructor(
    private readonly settings: EmbeddingSettings,
    private readonly options: EmbeddingProviderOptions = {},
  ) {
    this.catalogue = modelCatalogue(settings.openai_compatible?.models);
    this.policy = { timeoutMs: settings.request_timeout_ms, maxRetries: settings.max_retries, ...DEFAULT_BACKOFF, ...options.backoff };
  }

  /** The active default model: default_model, else the provider's first catalogue model. */
  defaultModel(): EmbeddingModelInfo {
    const { default_provider: provider, default_model: model } = this.settings;
    const found = this.catalogue.find((m) => m.provider === provider && (model === null || m.model === model));
    // The settings schema guarantees a match (default_model belongs to the provider; openai_compatible has ≥ 1 model).
    if (!found) throw new Error(`no embedding model for provider ${provider}`);
    return found;
  }

  available(): EmbeddingModelInfo[] {
    return this.catalogue.filter((m) => providerProblem(this.settings, m.provider) === null);
  }

  status(): EmbeddingStatus {
    const active = this.defaultModel();
    const reason = providerProblem(this.settings, active.provider);
    // The offline embedder is the zero-setup default and stays usable (configured), but is named for what it is.
    const notice = active.provider === "local" ? { message: OFFLINE_EMBEDDER_NOTICE, variable: "EMBEDDING_PROVIDER_CONFIG" as const } : null;
    return { provider: active.provider, model: active.model, dims: active.dims, configured: reason === null, reason, available_models: this.available(), notice };
  }

  /** A name the catalogue knows, preferring the default provider when an OpenAI-compatible server reuses a built-in name. */
  known(model: string): EmbeddingModelInfo | undefined {
    const matches = this.catalogue.filter((m) => m.model === model);
    return matches.find((m) => m.provider === this.settings.default_provider) ?? matches.find((m) => providerProblem(this.settings, m.provider) === null) ?? matches[0];
  }

  embedder(model?: string | null): Embedder {
    let info: EmbeddingModelInfo;
    if (model === undefined || model === null) {
      info = this.defaultModel();
      const reason = providerProblem(this.settings, info.provider);
      if (reason !== null) throw new Unavailable(`embedding provider is not configured: ${reason}`);
    } else {
      const known = this.known(model);
      const available = this.available().map((m) => m.model);
      if (!known) throw new Invalid(`unknown embedding model '${model}'; available: ${available.join(", ")}`);
      const reason = providerProblem(this.settings, known.provider);
      if (reason !== null) throw new Invalid(`embedding model '${model}' is not available (${reason}); available: ${available.join(", ")}`);
      info = known;
    }
    const key = `${info.provider}/${info.model}`;
    let embedder = this.embedders.get(key);
    if (!embedder) {
      embedder = this.create(info);
      this.embedders.set(key, embedder);
    }
    return embedder;
  }

  /** Only called once providerProblem() found the provider's settings complete, hence the non-null assertions. */
  private create(info: EmbeddingModelInfo): Embedder {
    const s = this.settings;
    switch (info.provider) {
      case "local":
        return localEmbedder;
      case "openai":
        return createOpenAiEmbedder(info, { baseURL: s.openai?.base_url ?? OPENAI_DEFAULT_BASE_URL, apiKey: s.openai?.api_key ?? null }, this.policy);
      case "openai_compatible":
        return createOpenAiEmbedder(info, { baseURL: s.openai_compatible!.base_url, apiKey: s.openai_compatible!.api_key ?? null }, this.policy);
      case "voyage":
        return createVoyageEmbedder(info, { apiKey: s.voyage!.api_key!, baseUrl: s.voyage?.base_url ?? VOYAGE_DEFAULT_BASE_URL }, this.policy);
      case "vertex": {
        const v = s.vertex!;
        const connection = { project: v.project, location: v.location, credentialsFile: v.credentials_file, apiKey: v.api_key, apiEndpoint: v.api_endpoint };
        return createVertexEmbedder(info, connection, this.policy, this.options.vertexAuth);
      }
    }
  }
}

/** The process-wide providers (their clients and retry state); tests swap in providers with other settings. */
export const embeddingProvidersSingleton = processSingleton("embeddingProviders", () => new EmbeddingProviders(embeddingSettings()));

const providers = (): EmbeddingProviders => embeddingProvidersSingleton.get();

/** The active provider and model, whether it can be used (and why not), and every model usable now. Never a key. */
export function embeddingStatus(): EmbeddingStatus {
  return providers().status();
}

/**
 * The embedder for `model` (null/undefined = the active default). Throws Unavailable ("embedding provider is not configured: <reason>")
 * when the default provider lacks its settings, Invalid for an unknown or unavailable model.
 */
export function getEmbedder(model?: string | null): Embedder {
  return providers().embedder(model);
}

/** Catalogue entry for a model name (built-in, local, or declared for the OpenAI-compatible server), configured or not. */
export function knownEmbeddingModel(model: string): EmbeddingModelInfo | undefined {
  return providers().known(model);
}
