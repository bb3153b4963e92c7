import "server-only";
import { withOwnTables } from "@/lib/db/own-tables";
import crypto from "node:crypto";
import { NextResponse, type NextRequest } from "next/server";
import { config } from "@/lib/config";
import { principalFromBearer } from "@/lib/auth/bearer";
import { pathPattern } from "@/lib/path-template";
import { principalFromSessionRequest } from "@/lib/auth/session";
import type { Principal } from "@/lib/access/roles";
import { Invalid, TooLarge, UnsupportedType, unauthorized } from "@/lib/errors";
import { JsonTooDeep, parseJsonInput } from "@/lib/json";
import { log } from "@/lib/log";
import { authorize, parseInput, shapeAnswer, type Operation, type OperationContext } from "@/lib/operation";
import { callerAddress } from "@/lib/security/caller";
import { withAuditRequest } from "@/lib/audit/context";
import type { Endpoint, SharedRateLimit } from "@/lib/endpoint";
import { asDomainError, domainErrorResponse } from "./errors";
import { enforceLimit } from "@/lib/security/rate-limit";
import { assertSameOrigin } from "./same-origin";

type RouteContext = { params: Promise<Record<string, string | string[]>> };

/**
 * The one wrapper that serves an operation over HTTP: request id, principal, role,
 * rate limits, zod parsing of params/query/body, response shaping, and every
 * error as `{"detail": ...}`.
 */
export function route<E extends Endpoint>(operation: Operation<E>) {
  const { endpoint } = operation;
  const assertServes = servesCheck(endpoint);
  const serve = async (req: NextRequest, context: RouteContext): Promise<Response> => {
    const requestId = req.headers.get("x-request-id") ?? crypto.randomUUID();
    const started = Date.now();
    let response: Response;
    try {
      assertServes(req);
      const principal = await resolvePrincipal(req, endpoint);
      if (principal?.via === "session") assertSameOrigin(req);
      await enforceRateLimit(req, endpoint, principal);
      const rawBody = endpoint.body && !endpoint.rawBody ? await readJsonBody(req) : undefined;
      const parts = parseInput(endpoint, { params: await context.params, query: searchParamsObject(req.nextUrl.searchParams), body: rawBody });
      await enforceSharedLimits(endpoint, { principal, ...parts });
      // What the operation records in the audit log names the caller's address (lib/audit/context.ts).
      // The organization's own tables are known to the manifest check for the whole request (lib/db/own-tables.ts).
      const result = await withAuditRequest({ address: callerAddress(req) }, () =>
        withOwnTables(principal?.orgId, () => operation.run({ ...parts, req, principal, requestId, signal: req.signal } as OperationContext<E>)),
      );
      response = result instanceof Response ? result : jsonResponse(endpoint, result);
    } catch (error) {
      response = errorResponse(error, requestId, endpoint);
    }
    response.headers.set("X-Request-Id", requestId);
    log.info("request", { requestId, method: req.method, path: req.nextUrl.pathname, status: response.status, ms: Date.now() - started });
    return response;
  };
  // The declaration travels with its handler: tests build URLs from it and check each route file's folder against it.
  return Object.assign(serve, { endpoint });
}

/**
 * A handler exported from the wrong file or under the wrong method would enforce another endpoint's
 * access rules and schemas: refuse the request (a defect, so a 500) rather than act on it.
 */
function servesCheck(endpoint: Endpoint): (req: NextRequest) => void {
  const path = pathPattern(endpoint.path);
  return (req) => {
    const method = req.method === "HEAD" ? "get" : req.method.toLowerCase();
    if (method !== endpoint.method || !path.test(req.nextUrl.pathname)) {
      throw new Error(`route for ${endpoint.method.toUpperCase()} ${endpoint.path} received ${req.method} ${req.nextUrl.pathname}`);
    }
  };
}

async function resolvePrincipal(req: NextRequest, endpoint: Endpoint): Promise<Principal | null> {
  if (endpoint.credentials === "none") return null;
  const header = req.headers.get("authorization");
  let principal: Principal | null = null;
  if (header) {
    const match = /^Bearer\s+(\S+)$/i.exec(header.trim());
    if (!match) throw unauthorized("Authorization header must be 'Bearer <token>'");
    principal = await principalFromBearer(match[1]);
  } else {
    principal = await principalFromSessionRequest(req);
  }
  return authorize(endpoint, principal);
}

async function enforceRateLimit(req: NextRequest, endpoint: Endpoint, principal: Principal | null) {
  if (!endpoint.rateLimit) return;
  // Signed-in callers are limited per user; anonymous ones per network address, never per a header they write.
  const caller = principal ? `user ${principal.orgId}:${principal.userId}` : `address ${callerAddress(req)}`;
  await enforceLimit(`${endpoint.method} ${endpoint.path} ${caller}`, endpoint.rateLimit);
}

async function enforceSharedLimits(endpoint: Endpoint, request: Parameters<SharedRateLimit["key"]>[0]) {
  // Each rule was typed against its endpoint's own schemas, which are what produced `request`.
  for (const rule of (endpoint.sharedLimits ?? []) as SharedRateLimit[]) {
    const key = rule.key(request);
    if (key !== null) await enforceLimit(`${rule.name} ${key}`, rule);
  }
}

function searchParamsObject(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of new Set(params.keys())) {
    const all = params.getAll(key);
    out[key] = all.length > 1 ? all : all[0];
  }
  return out;
}

/**
 * The parsed JSON body, or undefined when none was sent (the body schema decides whether that is allowed).
 * Every JSON body is bounded in size (API_BODY_LIMIT_BYTES, 413) and in nesting depth (MAX_JSON_DEPTH, 422).
 * "None sent" includes a POST with no Content-Type and an empty body, as `curl -X POST` makes it: Next hands
 * the handler an empty stream then, not a null body, so emptiness is judged by reading it.
 */
async function readJsonBody(req: NextRequest): Promise<unknown> {
  const type = req.headers.get("content-type") ?? "";
  const isJson = /^application\/([\w.+-]+\+)?json\b/i.test(type);
  if (type && !isJson) throw new UnsupportedType(`Content-Type must be application/json (got '${type}')`);
  const limit = config().api.bodyLimitBytes;
  const declared = Number(req.headers.get("content-length") ?? "0");
  if (declared > limit) throw new TooLarge(`Request body is larger than ${limit} bytes`);
  const text = await readLimitedText(req, limit);
  if (text.trim() === "") return undefined;
  if (!isJson) throw new UnsupportedType("Content-Type must be application/json (got 'none')");
  try {
    return parseJsonInput(text);
  } catch (error) {
    if (error instanceof JsonTooDeep) throw new Invalid([{ loc: ["body"], msg: `${error.message}; send a flatter value`, type: "json_too_deep" }]);
    throw new Invalid([{ loc: ["body"], msg: `JSON decode error: ${(error as Error).message}`, type: "json_invalid" }]);
  }
}

async function readLimitedText(req: NextRequest, limit: number): Promise<string> {
  if (!req.body) return "";
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new TooLarge(`Request body is larger than ${limit} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function jsonResponse(endpoint: Endpoint, result: unknown): Response {
  const status = endpoint.status ?? 200;
  if (status === 204) return new Response(null, { status });
  return NextResponse.json(shapeAnswer(endpoint, result), { status });
}

function errorResponse(error: unknown, requestId: string, endpoint: Endpoint): Response {
  const known = asDomainError(error);
  if (known) return domainErrorResponse(known);
  log.error("unhandled error", { requestId, path: endpoint.path, error: error instanceof Error ? error.stack : String(error) });
  return NextResponse.json({ detail: `Internal server error (request ${requestId})` }, { status: 500 });
}
