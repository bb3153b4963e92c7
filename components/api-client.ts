import type { z } from "zod";
import type { Endpoint } from "@/lib/endpoint";
import { fillPath } from "@/lib/path-template";

/*
 * The browser's one way to call the API: an endpoint declaration from lib/<domain>/contract.ts (path,
 * method, zod schemas) in, its typed and validated output out, or one ApiClientError. The contracts
 * import nothing server-only (lib/api/contract-imports.test.ts keeps it so).
 */

type In<T> = [T] extends [z.ZodType] ? z.input<T> : never;
type Out<T> = [T] extends [z.ZodType] ? z.output<T> : undefined;

/** What `E` answers: its response schema's output, or undefined for 204 and non-JSON answers. */
export type ResponseOf<E> = E extends Endpoint<infer _P, infer _Q, infer _B, infer R> ? Out<R> : never;

/** What a call to `E` takes: path params, query and body as the contract's schemas accept them. */
export type CallInput<E> =
  E extends Endpoint<infer P, infer Q, infer B, infer _R>
    ? { params?: In<P>; query?: Partial<Record<keyof In<Q>, QueryValue>>; body?: In<B>; signal?: AbortSignal }
    : never;

type QueryValue = string | number | boolean | null | undefined | readonly string[];

/** A failed call: HTTP status (0 when no answer arrived), the API's `detail`, and its text for people. */
export class ApiClientError extends Error {
  constructor(
    readonly status: number,
    readonly detail: unknown,
    /** Seconds from Retry-After on a 429 or a 503 (busy), else null. */
    readonly retryAfter: number | null = null,
  ) {
    super(detailText(detail, status, retryAfter));
    this.name = "ApiClientError";
  }
}

/** The one place an API error becomes a line of text: a string detail as is, validation items as "field: message; …". */
export function detailText(detail: unknown, status: number, retryAfter: number | null = null): string {
  let text: string;
  if (typeof detail === "string" && detail.trim() !== "") text = detail;
  else if (Array.isArray(detail) && detail.length > 0) {
    text = detail
      .map((item: { loc?: unknown[]; msg?: unknown }) => {
        const where = (item.loc ?? []).filter((part) => part !== "body" && part !== "query" && part !== "path").join(".");
        const message = typeof item.msg === "string" ? item.msg : "invalid";
        return where ? `${where}: ${message}` : message;
      })
      .join("; ");
  } else if (status === 0) text = "The server could not be reached; check your connection and try again.";
  else text = `The server answered HTTP ${status}`;
  if (status === 429 && !/retry in/i.test(text)) text += ` (rate limited; try again in ${retryAfter ?? "a few"} seconds)`;
  return text;
}

/** `endpoint.path` with its `{placeholders}` filled in and the query appended. */
export function endpointUrl<E extends Endpoint>(endpoint: E, input: Pick<CallInput<E>, "params" | "query"> = {}): string {
  const params = (input.params ?? {}) as Record<string, string>;
  const path = fillPath(endpoint.path, (name) => {
    const value = params[name];
    if (value === undefined) throw new Error(`${endpoint.method.toUpperCase()} ${endpoint.path}: path parameter '${name}' is missing`);
    return String(value);
  });
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries((input.query ?? {}) as Record<string, QueryValue>)) {
    if (value === undefined || value === null || value === "") continue;
    for (const one of Array.isArray(value) ? value : [value]) search.append(key, String(one));
  }
  const query = search.toString();
  return query ? `${path}?${query}` : path;
}

/** An error body's detail, or null when the body is not JSON. */
function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

/** Turns a non-2xx answer into the ApiClientError it stands for. */
export async function errorFromResponse(res: Response): Promise<ApiClientError> {
  const body = parseJson(await res.text().catch(() => "")) as { detail?: unknown } | null;
  const retryAfter = Number(res.headers.get("retry-after"));
  return new ApiClientError(res.status, body?.detail ?? null, (res.status === 429 || res.status === 503) && Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null);
}

/**
 * Calls `endpoint` with the browser's session cookie (none for endpoints declaring credentials
 * "none": embed and public data requests act with their token alone). Resolves with the response parsed by the
 * contract's schema (unknown fields dropped, SPEC §9.4), or undefined when the endpoint declares
 * none; rejects with ApiClientError, or with the signal's reason when aborted.
 */
export async function callApi<E extends Endpoint>(endpoint: E, input: CallInput<E> = {} as CallInput<E>): Promise<ResponseOf<E>> {
  const url = endpointUrl(endpoint, input);
  const hasBody = input.body !== undefined;
  let res: Response;
  try {
    res = await fetch(url, {
      method: endpoint.method.toUpperCase(),
      headers: hasBody ? { "content-type": "application/json" } : undefined,
      body: hasBody ? JSON.stringify(input.body) : undefined,
      signal: input.signal,
      cache: "no-store",
      credentials: endpoint.credentials === "none" ? "omit" : "same-origin",
    });
  } catch (error) {
    if (input.signal?.aborted) throw input.signal.reason;
    throw new ApiClientError(0, error instanceof Error ? null : String(error));
  }
  if (!res.ok) throw await errorFromResponse(res);
  if (!endpoint.response || res.status === 204) return undefined as ResponseOf<E>;
  const json = parseJson(await res.text());
  const parsed = endpoint.response.safeParse(json);
  if (!parsed.success) {
    throw new ApiClientError(res.status, `${endpoint.method.toUpperCase()} ${endpoint.path} answered an unexpected shape: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  }
  return parsed.data as ResponseOf<E>;
}
