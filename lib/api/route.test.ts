import { SignJWT, base64url } from "jose";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { GET as unknownPath, POST as unknownPathPost } from "@/app/api/[...path]/route";
import { issueLocalToken } from "@/lib/auth/local-issuer";
import type { Role } from "@/lib/access/roles";
import { tokenFor, call } from "@/test/helpers";
import { defineEndpoint, type Endpoint } from "@/lib/endpoint";
import { defineOperation, type OperationContext } from "@/lib/operation";
import { route as serve } from "./route";

/** These tests declare an endpoint and its behaviour together: one operation per route. */
const route = <E extends Endpoint>(endpoint: E, run: (ctx: OperationContext<E>) => Promise<unknown>) => serve(defineOperation(endpoint, run));

const echo = route(
  defineEndpoint({
    method: "post",
    path: "/api/v1/_echo/{id}",
    summary: "test",
    tags: [],
    access: "user",
    params: z.object({ id: z.string().regex(/^[a-z]+$/) }),
    query: z.object({ limit: z.coerce.number().int().min(1).max(10).default(5) }),
    body: z.object({ name: z.string().min(1), when: z.iso.date() }),
    response: z.object({ id: z.string(), limit: z.number(), name: z.string(), org: z.string() }),
  }),
  async ({ params, query, body, principal }) => ({ id: params.id, limit: query.limit, name: body.name, org: principal.orgSlug, secret: "stripped" }),
);

const adminOnly = route(
  defineEndpoint({ method: "get", path: "/api/v1/_admin", summary: "test", tags: [], access: "admin", rateLimit: { limit: 2, windowSeconds: 60 } }),
  async () => ({ ok: true }),
);

// Two a minute per organization, counted only for bodies that ask for it.
const perOrganization = route(
  defineEndpoint({
    method: "post",
    path: "/api/v1/_shared",
    summary: "test",
    tags: [],
    access: "user",
    body: z.object({ costly: z.boolean() }),
    sharedLimits: [{ name: "test shared", limit: 2, windowSeconds: 60, key: ({ principal, body }) => (body.costly ? (principal?.orgId ?? null) : null) }],
  }),
  async () => ({ ok: true }),
);

const crashing = route(defineEndpoint({ method: "get", path: "/api/v1/_crash", summary: "test", tags: [], access: "public" }), async () => {
  throw new Error("database password is hunter2");
});

const good = { name: "x", when: "2026-01-02" };

describe("route wrapper", () => {
  it("parses params, query and body and shapes the response", async () => {
    const res = await call(echo, "POST", "/api/v1/_echo/abc?limit=3", { token: await tokenFor("acme"), body: good, params: { id: "abc" } });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ id: "abc", limit: 3, name: "x", org: "acme" });
    expect(res.headers.get("x-request-id")).toBeTruthy();
  });

  it("reports every validation problem as 422 with loc, msg and type", async () => {
    const res = await call(echo, "POST", "/api/v1/_echo/ABC?limit=99", { token: await tokenFor("acme"), body: { when: "yesterday" }, params: { id: "ABC" } });
    expect(res.status).toBe(422);
    const locs = res.json.detail.map((d: { loc: string[] }) => d.loc.join("."));
    expect(locs).toEqual(expect.arrayContaining(["path.id", "query.limit", "body.name", "body.when"]));
    for (const item of res.json.detail) expect(item).toEqual({ loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) });
  });

  it.each([
    ["malformed JSON", { rawBody: "{not json", headers: { "content-type": "application/json" } }, 422, /JSON decode error/],
    ["empty body", { rawBody: "", headers: { "content-type": "application/json" } }, 422, /expected object/],
    ["wrong content type", { rawBody: "name=x", headers: { "content-type": "application/x-www-form-urlencoded" } }, 415, /application\/json/],
    ["oversize body", { rawBody: JSON.stringify({ name: "x".repeat(1_100_000), when: "2026-01-01" }), headers: { "content-type": "application/json" } }, 413, /larger than/],
  ])("answers %s with a clear detail", async (_name, options, status, message) => {
    const res = await call(echo, "POST", "/api/v1/_echo/abc", { token: await tokenFor("acme"), params: { id: "abc" }, ...options });
    expect(res.status).toBe(status);
    expect(JSON.stringify(res.json.detail)).toMatch(message);
  });

  it("treats an empty body without Content-Type as no body, and refuses a non-empty one with 415", async () => {
    const optional = route(
      defineEndpoint({ method: "post", path: "/api/v1/_optional", summary: "test", tags: [], access: "user", body: z.object({ n: z.number().default(7) }).optional() }),
      async ({ body }) => ({ n: body?.n ?? 7 }),
    );
    const token = await tokenFor("acme");
    // `curl -X POST` with no data: an empty stream and no Content-Type (bytes, so no text/plain is implied).
    const empty = await call(optional, "POST", "/api/v1/_optional", { token, rawBody: new Uint8Array(0) });
    expect(empty.status).toBe(200);
    expect(empty.json).toEqual({ n: 7 });
    const withoutType = await call(optional, "POST", "/api/v1/_optional", { token, rawBody: new TextEncoder().encode('{"n":1}') });
    expect(withoutType.status).toBe(415);
    expect(withoutType.json.detail).toMatch(/application\/json \(got 'none'\)/);
    // A required body still has to be there.
    const missing = await call(echo, "POST", "/api/v1/_echo/abc", { token, params: { id: "abc" }, rawBody: new Uint8Array(0) });
    expect(missing.status).toBe(422);
  });

  it("rejects missing, expired, forged and alg:none tokens with 401", async () => {
    const cases: [string | undefined, RegExp][] = [
      [undefined, /Not authenticated/],
      ["garbage", /malformed|trusted/],
      [await tokenFor("acme", "admin", { ttlSeconds: -10 }), /expired/],
    ];
    const valid = await tokenFor("acme");
    const [header, payload] = valid.split(".");
    cases.push([`${header}.${base64url.encode(JSON.stringify({ ...JSON.parse(new TextDecoder().decode(base64url.decode(payload))), role: "admin", org: "globex" }))}.${valid.split(".")[2]}`, /signature/]);
    const none = `${base64url.encode(JSON.stringify({ alg: "none", typ: "JWT" }))}.${payload}.`;
    cases.push([none, /malformed|not allowed|trusted/]);
    const hmac = await new SignJWT({ org: "acme", role: "admin" }).setProtectedHeader({ alg: "HS256" }).setIssuer("quarry-local").setAudience("quarry-api").setSubject("x").setExpirationTime("1h").sign(new TextEncoder().encode("x".repeat(32)));
    cases.push([hmac, /not allowed|trusted|malformed/]);
    for (const [token, message] of cases) {
      const res = await call(echo, "POST", "/api/v1/_echo/abc", { token, body: good, params: { id: "abc" } });
      expect(res.status, String(token)).toBe(401);
      expect(res.json.detail).toMatch(message);
    }
  });

  it("rejects a token for an unknown organization", async () => {
    const res = await call(echo, "POST", "/api/v1/_echo/abc", { token: await tokenFor("initech" as "acme"), body: good, params: { id: "abc" } });
    expect(res.status).toBe(401);
    expect(res.json.detail).toMatch(/unknown organization 'initech'/);
  });

  it("answers 403 to a valid token whose role is unknown", async () => {
    const token = await issueLocalToken({ userId: "usr_acme_admin", orgSlug: "acme", role: "superuser" as Role });
    const res = await call(echo, "POST", "/api/v1/_echo/abc", { token, body: good, params: { id: "abc" } });
    expect(res.status).toBe(403);
    expect(res.json.detail).toMatch(/role 'superuser' is not one of admin, general_manager, analyst/);
  });

  it("answers unknown paths under /api (v1 or not) with 404 and a detail", async () => {
    for (const path of ["/api/v1/no-such-thing/42", "/api/v2/locations"]) {
      for (const [handler, method] of [[unknownPath, "GET"], [unknownPathPost, "POST"]] as const) {
        const res = await call(async (req) => handler(req), method, path, { token: await tokenFor("acme") });
        expect(res.status).toBe(404);
        expect(res.json.detail).toBe(`No endpoint ${method} ${path}; see /docs`);
      }
    }
  });

  it("answers 403 to roles that may not call an endpoint", async () => {
    const res = await call(adminOnly, "GET", "/api/v1/_admin", { token: await tokenFor("acme", "analyst") });
    expect(res.status).toBe(403);
    expect(res.json.detail).toMatch(/requires the admin role/);
  });

  it("rate limits with 429 and Retry-After", async () => {
    const token = await tokenFor("globex");
    expect((await call(adminOnly, "GET", "/api/v1/_admin", { token })).status).toBe(200);
    expect((await call(adminOnly, "GET", "/api/v1/_admin", { token })).status).toBe(200);
    const limited = await call(adminOnly, "GET", "/api/v1/_admin", { token });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.json.detail).toMatch(/Too many requests/);
  });

  it("counts a declared shared limit across the callers of one key, and only requests its key function counts", async () => {
    const [admin, analyst, globex] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst"), tokenFor("globex")]);
    const send = (token: string, costly: boolean) => call(perOrganization, "POST", "/api/v1/_shared", { token, body: { costly } });
    expect((await send(admin, true)).status).toBe(200);
    expect((await send(analyst, true)).status).toBe(200);
    const limited = await send(admin, true);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another organization has its own counter; a request the key function passes over is not counted.
    expect((await send(globex, true)).status).toBe(200);
    expect((await send(analyst, false)).status).toBe(200);
  });

  it("refuses a request for another path or method than its endpoint's (a handler exported from the wrong file)", async () => {
    const token = await tokenFor("acme");
    expect((await call(echo, "POST", "/api/v1/_echo/abc", { token, body: good, params: { id: "abc" } })).status).toBe(200);
    expect((await call(echo, "POST", "/api/v1/_other/abc", { token, body: good, params: { id: "abc" } })).status).toBe(500);
    expect((await call(echo, "PUT", "/api/v1/_echo/abc", { token, body: good, params: { id: "abc" } })).status).toBe(500);
  });

  it("hides unexpected errors behind a generic 500", async () => {
    const res = await call(crashing, "GET", "/api/v1/_crash");
    expect(res.status).toBe(500);
    expect(res.text).not.toMatch(/hunter2|at /);
    expect(res.json.detail).toMatch(/Internal server error \(request /);
  });
});

describe("errors from another bundled copy of lib/errors", () => {
  it("keep their status: DomainError is recognised by its brand, not by prototype", async () => {
    // Next.js bundles route handlers separately; a globalThis singleton (embedding providers, storage)
    // throws the DomainError class of the bundle that built it. A second module instance stands for it.
    const other = (await import(/* @vite-ignore */ `${import.meta.dirname}/../errors.ts?other-bundle`)) as typeof import("@/lib/errors");
    const { DomainError, UpstreamFailed } = await import("@/lib/errors");
    expect(other.DomainError).not.toBe(DomainError);
    const upstream = route(defineEndpoint({ method: "get", path: "/api/v1/_upstream", summary: "test", tags: [], access: "public" }), async () => {
      throw new other.UpstreamFailed("the embedding provider failed");
    });
    const res = await call(upstream, "GET", "/api/v1/_upstream");
    expect(res.status).toBe(502);
    expect(res.json).toEqual({ detail: "the embedding provider failed" });
    expect(new other.Conflict("x")).toBeInstanceOf(DomainError);
    expect(new other.Conflict("x")).not.toBeInstanceOf(UpstreamFailed);
    expect(new Error("x")).not.toBeInstanceOf(DomainError);
  });
});
