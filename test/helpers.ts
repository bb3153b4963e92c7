import crypto from "node:crypto";
import { NextRequest } from "next/server";
import { issueLocalToken } from "@/lib/auth/local-issuer";
import type { Role } from "@/lib/auth/roles";

/** A bearer token from the embedded issuer for a seeded demo user. */
export function tokenFor(orgSlug: "acme" | "globex", role: Role = "admin", extra: { locationIds?: string[]; ttlSeconds?: number } = {}) {
  return issueLocalToken({ userId: `usr_${orgSlug}_${role}`, orgSlug, role, ...extra });
}

type RouteHandler = ((req: NextRequest, ctx: { params: Promise<Record<string, string | string[]>> }) => Promise<Response>) & { endpoint?: { path: string } };

/** The URL of a `route()` handler's own endpoint with `params` filled in. */
export function endpointUrl(handler: RouteHandler, params: Record<string, string | string[]>): string {
  if (!handler.endpoint) throw new Error("this handler is not made by route(); pass its URL");
  return handler.endpoint.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params[name] ?? `missing-${name}`)));
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  rawBody?: BodyInit;
  headers?: Record<string, string>;
  params?: Record<string, string | string[]>;
}

/** Calls a real route handler the way Next.js does, and returns status, headers and parsed JSON. */
/**
 * Invokes a real route handler. Without `url`, the URL is the handler's own endpoint path with
 * `options.params` filled in (the wrapper refuses a request for another path or method).
 */
export async function call(handler: RouteHandler, method: string, url?: string | CallOptions, options: CallOptions = {}) {
  if (typeof url === "object") return call(handler, method, undefined, url);
  url ??= endpointUrl(handler, options.params ?? {});
  const headers = new Headers(options.headers);
  if (options.token) headers.set("authorization", `Bearer ${options.token}`);
  let body: BodyInit | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  const init = { method, headers, body, duplex: "half" } as ConstructorParameters<typeof NextRequest>[1];
  const req = new NextRequest(new URL(url, "http://localhost:3000"), init);
  const res = await handler(req, { params: Promise.resolve(options.params ?? {}) });
  const text = await res.text();
  let json: unknown = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary response shapes
  return { status: res.status, headers: res.headers, json: json as any, text };
}

/** A next-auth session cookie (`Cookie` header value) for a seeded demo user, as the browser would send it (a new sign-in: its own session id). */
export async function sessionCookieFor(orgSlug: "acme" | "globex", role: Role = "admin", locations: string[] = [], claims: { sid?: string | null } = {}) {
  const { encode } = await import("next-auth/jwt");
  const { sessionSecret } = await import("@/lib/auth/session");
  // No `locations` claim means every location; an empty list is a malformed claim and refused.
  const scope = locations.length > 0 ? { locations } : {};
  // sid null: a cookie from before session ids.
  const sid = claims.sid === null ? {} : { sid: claims.sid ?? crypto.randomUUID() };
  const token = await encode({ token: { uid: `usr_${orgSlug}_${role}`, org: orgSlug, role, ...scope, ...sid, sub: `usr_${orgSlug}_${role}` }, secret: sessionSecret() });
  return `next-auth.session-token=${token}`;
}
