import type { z } from "zod";
import type { KeyScopeRule } from "@/lib/access/api-key-scopes";
import type { Access, Principal } from "@/lib/access/roles";

type AnyObject = z.ZodObject<z.ZodRawShape>;
type Parsed<T> = [T] extends [z.ZodType] ? z.output<T> : undefined;

/**
 * A limit over a key many callers can share (an organization, a flag in the body), counted once the
 * request is parsed. `key` answers null when the request does not count against it.
 */
export interface SharedRateLimit<P = unknown, Q = unknown, B = unknown> {
  /** Names the counter, e.g. "dashboard refresh". */
  name: string;
  limit: number;
  windowSeconds: number;
  key: (request: { principal: Principal | null; params: P; query: Q; body: B }) => string | null;
}

/**
 * Everything a route declares up front: where it lives, who may call it, what
 * it accepts and returns. The route wrapper enforces it; /openapi.json is
 * generated from the same objects.
 */
export interface Endpoint<
  P extends AnyObject | undefined = AnyObject | undefined,
  Q extends AnyObject | undefined = AnyObject | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
  R extends z.ZodType | undefined = z.ZodType | undefined,
> {
  method: "get" | "post" | "put" | "patch" | "delete";
  /** OpenAPI path, with `{param}` placeholders, e.g. `/api/v1/documents/{id}`. */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  access: Access;
  /**
   * Which organization API key scope lets a key call it (lib/access/api-key-scopes.ts `requiredScopes`):
   * by default from the first tag and the method (GET `<area>:read`, others `<area>:write`, keys refused
   * outside the dashboards and documents areas); "none" refuses keys.
   */
  keyScope?: KeyScopeRule;
  /**
   * "none": the wrapper reads neither cookies nor an Authorization header, so the request acts
   * only with what its body carries (embed and public data requests never use the viewer's session).
   */
  credentials?: "none";
  params?: P;
  query?: Q;
  body?: B;
  /** Response body schema; omit for responses that are not JSON (files, streams, redirects). */
  response?: R;
  /** Status of a successful response (200 by default). */
  status?: number;
  /** Content type of a non-JSON success response, for the OpenAPI document (several: the one answered depends on the request). */
  produces?: string | readonly string[];
  /** Requests per window per caller (per IP when public). */
  rateLimit?: { limit: number; windowSeconds: number };
  /** Further limits over shared keys; services never call the limiter themselves. */
  sharedLimits?: SharedRateLimit<Parsed<P>, Parsed<Q>, Parsed<B>>[];
  /** Raw bodies (uploads) are passed through unparsed. */
  rawBody?: boolean;
  /** Error statuses worth listing in the documentation beyond the common ones. */
  errors?: number[];
}

export function defineEndpoint<
  P extends AnyObject | undefined = undefined,
  Q extends AnyObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  R extends z.ZodType | undefined = undefined,
>(endpoint: Endpoint<P, Q, B, R>): Endpoint<P, Q, B, R> {
  return endpoint;
}
