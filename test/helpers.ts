import crypto from "node:crypto";
import { NextRequest } from "next/server";
import { issueLocalToken } from "@/lib/auth/local-issuer";
import type { Role } from "@/lib/access/roles";
import { fillPath } from "@/lib/path-template";

/** A bearer token from the embedded issuer for a seeded demo user. */
export function tokenFor(orgSlug: "acme" | "globex", role: Role = "admin", extra: { locationIds?: string[]; ttlSeconds?: number } = {}) {
  return issueLocalToken({ userId: `usr_${orgSlug}_${role}`, orgSlug, role, ...extra });
}

/**
 * A bearer token of another member of a demo organization (made like the seeded one of `role`, if missing): a caller
 * of its own, for what is counted per caller (rate limits). A token must name an active member (lib/auth/bearer.ts).
 */
export async function tokenForMember(orgSlug: "acme" | "globex", role: Role, userId: string) {
  const { getDb } = await import("@/lib/db/client");
  const { system } = await getDb();
  await system.query(
    `INSERT INTO users (id, org_id, email, name, role, location_ids, password_hash)
     SELECT $1, org_id, $2, name || ' (' || $1 || ')', role, location_ids, password_hash FROM users WHERE id = $3
     ON CONFLICT (id) DO NOTHING`,
    [userId, `${userId}@${orgSlug}.test`, `usr_${orgSlug}_${role}`],
  );
  return issueLocalToken({ userId, orgSlug, role });
}

type RouteHandler = ((req: NextRequest, ctx: { params: Promise<Record<string, string | string[]>> }) => Promise<Response>) & { endpoint?: { path: string } };

/** The URL of a `route()` handler's own endpoint with `params` filled in. */
export function endpointUrl(handler: RouteHandler, params: Record<string, string | string[]>): string {
  if (!handler.endpoint) throw new Error("this handler is not made by route(); pass its URL");
  return fillPath(handler.endpoint.path, (name) => String(params[name] ?? `missing-${name}`));
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

/**
 * A next-auth session cookie (`Cookie` header value) for a seeded demo user, as the browser would send
 * it after signing in now (a new sign-in: its own session id). Sessions are checked against the user's
 * current row on every request (lib/auth/session.ts), so the claims are the row's: its role, location
 * scope and session epoch. With `locations` other than the seeded user's, the cookie is for a user of
 * that role scoped to exactly those locations (`usr_<org>_<role>_at_<hash>`, made on first use).
 */
export async function sessionCookieFor(orgSlug: "acme" | "globex", role: Role = "admin", locations: string[] = [], claims: { sid?: string | null } = {}) {
  const { encode } = await import("next-auth/jwt");
  const { sessionSecret } = await import("@/lib/auth/session");
  const { getDb } = await import("@/lib/db/client");
  const { system } = await getDb();
  const userOf = async (id: string) =>
    (await system.query<{ role: Role; location_ids: string[]; session_epoch: number }>("SELECT role, location_ids, session_epoch FROM users WHERE id = $1", [id]))[0];
  let uid = `usr_${orgSlug}_${role}`;
  const seeded = await userOf(uid);
  if (!seeded) throw new Error(`sessionCookieFor: no user ${uid}`);
  const wanted = [...new Set(locations)].sort();
  if (wanted.length > 0 && wanted.join(",") !== [...seeded.location_ids].sort().join(",")) {
    const suffix = crypto.createHash("sha256").update(wanted.join(",")).digest("hex").slice(0, 8);
    const scoped = `${uid}_at_${suffix}`;
    await system.query(
      `INSERT INTO users (id, org_id, email, name, role, location_ids, password_hash)
       SELECT $1, org_id, $2, name || ' (scoped)', role, $3, password_hash FROM users WHERE id = $4
       ON CONFLICT (id) DO NOTHING`,
      [scoped, `${role}+${suffix}@${orgSlug}.test`, wanted, uid],
    );
    uid = scoped;
  }
  const user = (await userOf(uid))!;
  // An unscoped user's cookie has no `locations` claim (every location); an empty list would be a malformed claim and refused.
  const scope = user.location_ids.length > 0 ? { locations: user.location_ids } : {};
  // sid null: a cookie from before session ids.
  const sid = claims.sid === null ? {} : { sid: claims.sid ?? crypto.randomUUID() };
  const token = await encode({ token: { uid, org: orgSlug, role: user.role, ...scope, epoch: user.session_epoch, ...sid, sub: uid }, secret: sessionSecret() });
  return `next-auth.session-token=${token}`;
}
