import "server-only";
import crypto from "node:crypto";
import type { NextRequest } from "next/server";
import type { z } from "zod";
import { requiredScopes } from "@/lib/access/api-key-scopes";
import { allows, type Principal } from "@/lib/access/roles";
import { Invalid, forbidden, unauthorized, zodIssuesToItems, type ValidationItem } from "@/lib/errors";
import { toJsonValue } from "@/lib/json";
import { withOwnTables } from "@/lib/db/own-tables";
import type { Endpoint } from "@/lib/endpoint";

// [T] keeps the check from distributing over `undefined` (an endpoint without that part).
type Out<T> = [T] extends [z.ZodType] ? z.output<T> : undefined;
type In<T> = [T] extends [z.ZodType] ? z.input<T> : undefined;
type Parts<E> = E extends Endpoint<infer P, infer Q, infer B> ? { params: Out<P>; query: Out<Q>; body: Out<B> } : never;

/** What an operation's `run` receives: the caller and the request parts, parsed by the endpoint's schemas. */
export type OperationContext<E extends Endpoint> = Parts<E> & {
  principal: E["access"] extends "public" ? Principal | null : Principal;
  requestId: string;
  /** Ends when the caller goes away (the HTTP request is aborted). */
  signal: AbortSignal;
  /** The HTTP request, when `route()` serves the operation; absent when a page or script invokes it. */
  req?: NextRequest;
};

/**
 * One operation of the API: its declaration (`endpoint`, from the domain's contract: path, access, schemas,
 * rate limits) and its behaviour (`run`). Route files serve it with `route(operation)`; pages and scripts
 * call it with `invoke(operation, principal, input)`. Both check `access` and parse with the same schemas.
 */
export interface Operation<E extends Endpoint = Endpoint, R = unknown> {
  endpoint: E;
  run: (ctx: OperationContext<E>) => Promise<R>;
}

export function defineOperation<E extends Endpoint, R>(endpoint: E, run: (ctx: OperationContext<E>) => Promise<R>): Operation<E, R> {
  return { endpoint, run };
}

/** The request parts as a caller writes them, before parsing (`invoke`'s input). */
export type OperationInput<E> = E extends Endpoint<infer P, infer Q, infer B> ? { params?: In<P>; query?: In<Q>; body?: In<B> } : never;

/** What `invoke` answers: the body the endpoint sends over HTTP (its `response` schema), or `run`'s own result without one. */
export type Answer<E, R> = E extends Endpoint<infer _P, infer _Q, infer _B, infer S> ? ([S] extends [z.ZodType] ? z.output<S> : R) : never;

/**
 * The access policy, in one place: `null` for a public endpoint without a caller, otherwise the caller,
 * who must be signed in and hold one of the endpoint's roles.
 */
export function authorize(endpoint: Endpoint, principal: Principal | null): Principal | null {
  if (endpoint.access === "public") return principal?.via === "api_key" && !keyMay(endpoint, principal) ? null : principal;
  if (!principal) throw unauthorized();
  if (principal.via === "api_key" && !keyMay(endpoint, principal)) {
    const needed = requiredScopes(endpoint);
    throw forbidden(needed.length === 0 ? "API keys cannot call this operation" : `This operation requires an API key with the scope ${needed.map((s) => `'${s}'`).join(" or ")}`);
  }
  if (!allows(endpoint.access, principal.role)) {
    const needed = endpoint.access === "admin" ? "admin" : (endpoint.access as readonly string[]).join(" or ");
    throw forbidden(`This operation requires the ${needed} role; you are ${principal.role}`);
  }
  return principal;
}

/**
 * Whether an organization API key's principal may call the endpoint: it must hold one of the scopes the
 * endpoint requires (none: keys are refused). Its role (admin) is then checked like anyone's, so a key
 * never does more than its scopes nor more than an admin could. On a public endpoint a key without the
 * scope is treated as anonymous.
 */
function keyMay(endpoint: Endpoint, principal: Principal): boolean {
  const held = principal.scopes ?? [];
  return requiredScopes(endpoint).some((scope) => held.includes(scope));
}

/** Parses params, query and body with the endpoint's schemas; all three are checked first, so one 422 lists every problem. */
export function parseInput(endpoint: Endpoint, raw: { params: unknown; query: unknown; body: unknown }): { params: unknown; query: unknown; body: unknown } {
  const problems: ValidationItem[] = [];
  const params = parsePart("path", endpoint.params, raw.params, problems);
  const query = parsePart("query", endpoint.query, raw.query, problems);
  const body = endpoint.rawBody ? undefined : parsePart("body", endpoint.body, raw.body, problems);
  if (problems.length > 0) throw new Invalid(problems);
  return { params, query, body };
}

function parsePart(where: "path" | "query" | "body", schema: z.ZodType | undefined, value: unknown, problems: ValidationItem[]): unknown {
  if (!schema) return undefined;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  problems.push(...zodIssuesToItems(where, parsed.error));
  return undefined;
}

/** A result as the endpoint sends it: Dates become ISO strings, Decimals numbers, and `response` drops undeclared fields. */
export function shapeAnswer(endpoint: Endpoint, result: unknown): unknown {
  const value = toJsonValue(result ?? null);
  return endpoint.response ? endpoint.response.parse(value) : value;
}

/**
 * Runs an operation for a page or a script exactly as its route would, minus HTTP: the same access check,
 * the same parsing, and the answer shaped like the response body (a `Response` result is passed through).
 * Rate limits are per HTTP caller and stay with `route()`.
 */
export async function invoke<E extends Endpoint, R>(
  operation: Operation<E, R>,
  principal: Principal | null,
  input: OperationInput<E> = {} as OperationInput<E>,
  options: { signal?: AbortSignal } = {},
): Promise<Answer<E, R>> {
  const { endpoint } = operation;
  const caller = authorize(endpoint, principal);
  const raw = input as { params?: unknown; query?: unknown; body?: unknown };
  const parts = parseInput(endpoint, { params: raw.params ?? {}, query: raw.query ?? {}, body: raw.body });
  const context = { ...parts, principal: caller, requestId: crypto.randomUUID(), signal: options.signal ?? new AbortController().signal };
  const result = await withOwnTables(caller?.orgId, () => operation.run(context as OperationContext<E>));
  if (result instanceof Response || endpoint.status === 204) return result as Answer<E, R>;
  return (endpoint.response ? shapeAnswer(endpoint, result) : result) as Answer<E, R>;
}
