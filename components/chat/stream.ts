import type { ChatEvent, ChatMessage } from "@/lib/chat/contract";
import { errorDetail } from "@/components/documents/format";

/** An error to show as is: the words are meant for the person asking. */
export class ChatRequestError extends Error {}

/**
 * Posts the conversation to /api/v1/chat and calls `onEvent` for each NDJSON
 * line as it arrives. Errors before the stream starts (rate limit, a chat
 * model that cannot be reached) become a ChatRequestError in plain words.
 */
export async function streamChat(messages: ChatMessage[], signal: AbortSignal, onEvent: (event: ChatEvent) => void): Promise<void> {
  let res: Response;
  try {
    res = await fetch("/api/v1/chat", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages }),
      signal,
    });
  } catch (error) {
    if (signal.aborted) throw error;
    throw new ChatRequestError("Quarry could not be reached. Check your connection and try again.");
  }
  if (!res.ok) {
    let body: unknown = null;
    try {
      body = await res.json();
    } catch {
      body = null;
    }
    if (res.status === 429) throw new ChatRequestError(`You are asking faster than allowed. Try again in ${res.headers.get("retry-after") ?? "a few"} seconds.`);
    if (res.status === 401) throw new ChatRequestError("Your session has ended. Sign in again to continue.");
    throw new ChatRequestError(errorDetail(body, `The question could not be answered (HTTP ${res.status}).`));
  }
  if (!res.body) throw new ChatRequestError("The answer arrived empty. Try again.");
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    let chunk: ReadableStreamReadResult<string>;
    try {
      chunk = await reader.read();
    } catch (error) {
      if (signal.aborted) throw error;
      throw new ChatRequestError("The connection dropped before the answer was complete.");
    }
    if (chunk.done) break;
    buffer += chunk.value;
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (line) onEvent(JSON.parse(line) as ChatEvent);
      newline = buffer.indexOf("\n");
    }
  }
  if (buffer.trim()) onEvent(JSON.parse(buffer) as ChatEvent);
}
