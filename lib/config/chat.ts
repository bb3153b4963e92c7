import "server-only";
import { z } from "zod";
import { ConfigError, jsonEnv } from "./schema";
import { processSingleton } from "@/lib/process-singleton";

/**
 * `CHAT_MODEL_CONFIG`: an OpenAI-compatible chat completions server. Unknown
 * fields are refused so a misspelt `temprature` fails at start instead of
 * being silently ignored.
 */
export const ChatModelSettings = z
  .object({
    /** Base URL of the API, including the version segment: `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`. */
    base_url: z.url(),
    /** Sent as `Authorization: Bearer …`; optional because local servers (Ollama, vLLM, llama.cpp) often need none. */
    api_key: z.string().min(1).optional(),
    model: z.string().min(1),
    /** Passages retrieved per question and placed in the prompt. */
    max_context_chunks: z.number().int().min(1).max(20).default(6),
    temperature: z.number().min(0).max(2).default(0.2),
    /** Upper bound of the answer's length. */
    max_tokens: z.number().int().min(16).max(32_000).default(1024),
    /** Time allowed for the whole answer, first token to last. */
    request_timeout_ms: z.number().int().min(1000).max(600_000).default(120_000),
  })
  .strict();
export type ChatModelSettings = z.output<typeof ChatModelSettings>;

/** Passages shown when no chat model is configured (the same default as `max_context_chunks`). */
export const DEFAULT_CONTEXT_CHUNKS = 6;

export interface ChatConfig {
  /** null: no chat model; the chat answers with the retrieved passages. */
  model: ChatModelSettings | null;
  contextChunks: number;
}

const ChatEnv = z.object({ CHAT_MODEL_CONFIG: jsonEnv("CHAT_MODEL_CONFIG", ChatModelSettings) });

/** Parses `CHAT_MODEL_CONFIG`; throws ConfigError naming the variable and the field. */
export function loadChatConfig(env: Record<string, string | undefined>): ChatConfig {
  const parsed = ChatEnv.safeParse({ CHAT_MODEL_CONFIG: env.CHAT_MODEL_CONFIG });
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => (i.code === "custom" ? i.message : `${i.path.join(".")}: ${i.message}`));
    throw new ConfigError(`Invalid configuration:\n  ${lines.join("\n  ")}`);
  }
  const model = parsed.data.CHAT_MODEL_CONFIG ?? null;
  return { model, contextChunks: model?.max_context_chunks ?? DEFAULT_CONTEXT_CHUNKS };
}

/** Chat configuration, parsed once per process (a change needs a restart, like the other platform variables). */
export const chatConfigSingleton = processSingleton("chatConfig", () => loadChatConfig(process.env));

export const chatConfig = (): ChatConfig => chatConfigSingleton.get();
