import { retryAfterMs, type ProviderFailure } from "./retry";

/** A non-2xx answer from a provider's REST API, carrying what callProvider needs. */
export class ProviderHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfterMs: number | null,
  ) {
    super(message);
  }

  failure(): ProviderFailure {
    return { status: this.status, message: this.message, retryAfterMs: this.retryAfterMs };
  }
}

/**
 * One attempt of a provider's JSON REST call: POSTs `body` and returns the parsed answer (null when it
 * is not JSON). A non-2xx answer throws ProviderHttpError with the message `errorMessage` finds in the
 * error body when it is a string, else the status text, and the Retry-After the server sent.
 */
export async function postJson<T>(url: string, init: { headers: HeadersInit; body: unknown; signal: AbortSignal }, errorMessage: (body: T | null) => unknown): Promise<T | null> {
  const headers = new Headers(init.headers);
  headers.set("content-type", "application/json");
  const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(init.body), signal: init.signal });
  const body = (await response.json().catch(() => null)) as T | null;
  if (!response.ok) {
    const message = errorMessage(body);
    throw new ProviderHttpError(response.status, typeof message === "string" ? message : response.statusText, retryAfterMs(response.headers));
  }
  return body;
}
