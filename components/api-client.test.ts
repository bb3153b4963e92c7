import fs from "node:fs";
import path from "node:path";
import { NextRequest } from "next/server";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import * as dashboardsRoute from "@/app/api/v1/custom-dashboards/route";
import * as documentRoute from "@/app/api/v1/documents/[id]/route";
import * as locationsRoute from "@/app/api/v1/locations/route";
import { createDashboard } from "@/lib/dashboards/contract";
import { downloadDocument, getDocument, listDocuments } from "@/lib/documents/contract";
import { listLocations } from "@/lib/locations/contract";
import { tokenFor } from "@/test/helpers";
import { ApiClientError, callApi, detailText, endpointUrl } from "./api-client";

type Handler = (req: NextRequest, ctx: { params: Promise<Record<string, string>> }) => Promise<Response>;

/**
 * The browser's fetch, answered by the real route handlers: the relative URL the client builds is
 * matched to its route file the way Next's router would, with a bearer token standing in for the session.
 */
const ROUTES: [RegExp, Record<string, Handler>][] = [
  [/^\/api\/v1\/locations$/, locationsRoute as unknown as Record<string, Handler>],
  [/^\/api\/v1\/custom-dashboards$/, dashboardsRoute as unknown as Record<string, Handler>],
  [/^\/api\/v1\/documents\/(?<id>[^/]+)$/, documentRoute as unknown as Record<string, Handler>],
];
let token: string;
beforeAll(async () => {
  token = await tokenFor("acme", "admin");
});
afterEach(() => vi.unstubAllGlobals());

function serveWithRoutes() {
  const seen: string[] = [];
  vi.stubGlobal("fetch", async (input: string, init: RequestInit = {}) => {
    seen.push(`${init.method ?? "GET"} ${input}`);
    const url = new URL(input, "http://localhost:3000");
    for (const [pattern, module] of ROUTES) {
      const match = pattern.exec(url.pathname);
      const handler = match && module[init.method ?? "GET"];
      if (!handler) continue;
      const headers = new Headers(init.headers);
      headers.set("authorization", `Bearer ${token}`);
      const req = new NextRequest(url, { ...init, headers } as ConstructorParameters<typeof NextRequest>[1]);
      return handler(req, { params: Promise.resolve({ ...match.groups }) });
    }
    return new Response(JSON.stringify({ detail: "no route" }), { status: 404 });
  });
  return seen;
}

describe("typed browser client", () => {
  it("builds the URL from the declaration: placeholders encoded, empty query values left out", () => {
    expect(endpointUrl(getDocument, { params: { id: "a/b c" } })).toBe("/api/v1/documents/a%2Fb%20c");
    expect(endpointUrl(downloadDocument, { params: { id: "doc_1" }, query: { disposition: "inline" } })).toBe("/api/v1/documents/doc_1/download?disposition=inline");
    expect(endpointUrl(listDocuments, { query: { q: undefined, status: undefined, limit: 100 } })).toBe("/api/v1/documents?limit=100");
    expect(() => endpointUrl(getDocument, {})).toThrow(/path parameter 'id' is missing/);
  });

  it("returns the response parsed by the contract's schema", async () => {
    const seen = serveWithRoutes();
    const locations = await callApi(listLocations);
    expect(seen).toEqual(["GET /api/v1/locations"]);
    expect(locations.total).toBe(5);
    expect(locations.items[0]).toEqual({ id: expect.any(String), code: expect.any(String), name: expect.any(String), city: expect.any(String), region: expect.any(String), created_at: expect.stringMatching(/Z$/), archived_at: null });
  });

  it("throws one ApiClientError with the status and the detail as text", async () => {
    serveWithRoutes();
    const missing = await callApi(getDocument, { params: { id: "doc_missing" } }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(ApiClientError);
    expect(missing).toMatchObject({ status: 404, message: "Document not found" });

    const invalid = await callApi(createDashboard, { body: { name: "x", slug: "Not A Slug", spec_yaml: "version: '1.0'" } }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(ApiClientError);
    expect((invalid as ApiClientError).status).toBe(422);
    expect((invalid as ApiClientError).message).toMatch(/^slug: /);
  });

  it("carries Retry-After on a 429 and says when to try again", async () => {
    vi.stubGlobal("fetch", async () => new Response(JSON.stringify({ detail: "Too many requests" }), { status: 429, headers: { "retry-after": "3" } }));
    const limited = (await callApi(listLocations).catch((e: unknown) => e)) as ApiClientError;
    expect([limited.status, limited.retryAfter, limited.message]).toEqual([429, 3, "Too many requests (rate limited; try again in 3 seconds)"]);
  });

  it("reports an unreachable server and a body that does not match the contract", async () => {
    vi.stubGlobal("fetch", async () => {
      throw new TypeError("Failed to fetch");
    });
    expect(await callApi(listLocations).catch((e: unknown) => (e as Error).message)).toBe("The server could not be reached; check your connection and try again.");
    vi.stubGlobal("fetch", async () => new Response(JSON.stringify({ items: "nope" }), { status: 200 }));
    expect(await callApi(listLocations).catch((e: unknown) => (e as ApiClientError).message)).toMatch(/^GET \/api\/v1\/locations answered an unexpected shape/);
  });

  it("turns every detail shape into one line", () => {
    expect(detailText("Nope", 409)).toBe("Nope");
    expect(detailText([{ loc: ["body", "spec_yaml"], msg: "is required", type: "missing" }, { loc: ["query", "limit"], msg: "too big", type: "too_big" }], 422)).toBe("spec_yaml: is required; limit: too big");
    expect(detailText(null, 502)).toBe("The server answered HTTP 502");
  });
});

describe("contracts in the browser", () => {
  /** Every module a contract imports, transitively, resolved from the `@/` alias and relative paths. */
  function importGraph(entry: string, seen = new Set<string>()): Set<string> {
    if (seen.has(entry)) return seen;
    seen.add(entry);
    const source = fs.readFileSync(entry, "utf8");
    for (const [, spec] of source.matchAll(/^import\s+(?!type\b)[^;]*?from\s+"([^"]+)"/gm)) {
      if (!spec.startsWith("@/") && !spec.startsWith(".")) {
        seen.add(spec);
        continue;
      }
      const base = spec.startsWith("@/") ? path.join(process.cwd(), spec.slice(2)) : path.resolve(path.dirname(entry), spec);
      const file = [`${base}.ts`, `${base}.tsx`, path.join(base, "index.ts")].find((f) => fs.existsSync(f));
      if (file) importGraph(file, seen);
    }
    return seen;
  }

  it("import nothing server-only, so components can import them", () => {
    const contracts = fs
      .readdirSync("lib", { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      // Every contract module, named as the route generator finds them (lib/<domain>/contract.ts, <part>-contract.ts).
      .flatMap((dir) => fs.readdirSync(path.join("lib", dir.name)).filter((name) => /^([\w-]+-)?contract\.ts$/.test(name)).map((name) => path.join("lib", dir.name, name)));
    expect(contracts.length).toBeGreaterThanOrEqual(6);
    for (const contract of contracts) {
      const modules = [...importGraph(path.join(process.cwd(), contract))];
      const external = modules.filter((m) => !m.startsWith("/"));
      expect(external.filter((m) => m !== "zod"), contract).toEqual([]);
      for (const file of modules.filter((m) => m.startsWith("/"))) {
        expect(fs.readFileSync(file, "utf8"), `${contract} -> ${path.relative(process.cwd(), file)}`).not.toMatch(/import\s+"server-only"|from\s+"node:/);
      }
    }
  });
});
