import "server-only";
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import type { ChatModelSettings } from "@/lib/config/chat";
import { DomainError, UpstreamFailed, TimedOut } from "@/lib/errors";
import type { PromptMessage } from "./prompt";

export type ModelPiece = { kind: "text"; text: string } | { kind: "finish"; reason: string | null };

/** Thrown when the caller went away; nothing is left to report to anyone. */
export class ChatAbortedError extends Error {}

function clientFor(settings: ChatModelSettings): OpenAI {
  return new OpenAI({
    baseURL: settings.base_url,
    // The SDK refuses to start without a key; servers that need none get no Authorization header at all (null unsets it).
    apiKey: settings.api_key ?? "unused",
    defaultHeaders: settings.api_key ? undefined : { Authorization: null },
    timeout: settings.request_timeout_ms,
    // One retry covers a dropped keep-alive connection; more would only delay the visible error.
    maxRetries: 1,
  });
}

/** A short, key-free description of what went wrong upstream. */
function describeFailure(error: unknown, settings: ChatModelSettings): DomainError | ChatAbortedError {
  const scrub = (text: string) => (settings.api_key ? text.split(settings.api_key).join("***") : text).slice(0, 300);
  if (error instanceof ChatAbortedError || error instanceof APIUserAbortError) return new ChatAbortedError("aborted");
  if (error instanceof APIConnectionTimeoutError || (error instanceof Error && error.name === "TimeoutError")) {
    return new TimedOut(`The chat model did not answer within ${Math.round(settings.request_timeout_ms / 1000)} s`);
  }
  if (error instanceof APIConnectionError) return new UpstreamFailed(`The chat model at ${settings.base_url} cannot be reached`);
  if (error instanceof APIError) return new UpstreamFailed(`The chat model failed: ${scrub(error.message)}`);
  return new UpstreamFailed(`The chat model failed: ${scrub(error instanceof Error ? error.message : String(error))}`);
}

/**
 * Starts a streamed chat completion (`POST {base_url}/chat/completions` with
 * `stream: true`). Resolves once the server has accepted the request, so an
 * unreachable server, a bad key or an unknown model is an DomainError (502/504)
 * before any byte of the answer; the pieces then arrive as the model writes.
 */
export async function openChatStream(settings: ChatModelSettings, messages: PromptMessage[], signal: AbortSignal): Promise<AsyncIterable<ModelPiece>> {
  const deadline = AbortSignal.timeout(settings.request_timeout_ms);
  const combined = AbortSignal.any([signal, deadline]);
  let stream;
  try {
    stream = await clientFor(settings).chat.completions.create(
      { model: settings.model, messages, stream: true, temperature: settings.temperature, max_tokens: settings.max_tokens },
      { signal: combined },
    );
  } catch (error) {
    throw describeFailure(deadline.aborted && !signal.aborted ? Object.assign(new Error("timeout"), { name: "TimeoutError" }) : error, settings);
  }
  return (async function* pieces(): AsyncGenerator<ModelPiece> {
    try {
      for await (const chunk of stream) {
        const choice = chunk.choices[0];
        if (!choice) continue;
        if (choice.delta?.content) yield { kind: "text", text: choice.delta.content };
        if (choice.finish_reason) yield { kind: "finish", reason: choice.finish_reason };
      }
    } catch (error) {
      if (signal.aborted) throw new ChatAbortedError("aborted");
      throw describeFailure(deadline.aborted ? Object.assign(new Error("timeout"), { name: "TimeoutError" }) : error, settings);
    }
  })();
}
