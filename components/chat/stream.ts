import { chat, type ChatEvent, type ChatMessage } from "@/lib/chat/contract";
import { endpointUrl, errorFromResponse } from "@/components/api-client";

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
    // fetch itself rather than callApi: the answer is an NDJSON stream read as it arrives.
    res = await fetch(endpointUrl(chat), {
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
    const error = await errorFromResponse(res);
    if (error.status === 429) throw new ChatRequestError(`You are asking faster than allowed. Try again in ${error.retryAfter ?? "a few"} seconds.`);
    if (error.status === 401) throw new ChatRequestError("Your session has ended. Sign in again to continue.");
    throw new ChatRequestError(error.message);
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
