import { beforeAll, describe, expect, it } from "vitest";
import type { Endpoint } from "@/lib/endpoint";
import { ENDPOINTS } from "@/lib/api/registry";
import { ApiKeyScope, requiredScopes } from "@/lib/access/api-key-scopes";
import { getDb } from "@/lib/db/client";
import { call, tokenFor } from "@/test/helpers";
import { endpointKey, handlerOf } from "./registry-handlers";

/*
 * The API-key dimension of the route matrix (issue 30): every endpoint of the registry × every scope.
 * Each call is made by an acme key holding that one scope, aimed at acme's own resources. A key without
 * a scope the endpoint requires is refused with 403 before anything runs; a key with it is never refused
 * for its scope (and nothing answers 500). The table below is the decision, written down: a new endpoint
 * fails here until its scope is declared (derived from its tag and method, or its own `keyScope`).
 */
const SCOPES_OF: Record<string, readonly string[]> = {
  "GET /api/v1/api-keys": [],
  "POST /api/v1/api-keys": [],
  "DELETE /api/v1/api-keys/{id}": [],
  "POST /api/v1/chat": ["documents:read"],
  "GET /api/v1/custom-dashboards": ["dashboards:read"],
  "POST /api/v1/custom-dashboards": ["dashboards:write"],
  "POST /api/v1/custom-dashboards/_seed": ["dashboards:write"],
  "POST /api/v1/custom-dashboards/_plan": ["dashboards:read"],
  "POST /api/v1/custom-dashboards/_apply": ["dashboards:write"],
  "GET /api/v1/metrics": ["dashboards:read"],
  "GET /api/v1/metrics/{dataset}/{metric}/series": ["dashboards:read"],
  "PUT /api/v1/metrics/{dataset}/{metric}/certification": ["dashboards:publish"],
  "DELETE /api/v1/metrics/{dataset}/{metric}/certification": ["dashboards:publish"],
  "GET /api/v1/custom-dashboards/{id}": ["dashboards:read"],
  "PUT /api/v1/custom-dashboards/{id}": ["dashboards:write"],
  "DELETE /api/v1/custom-dashboards/{id}": ["dashboards:write"],
  "POST /api/v1/custom-dashboards/{id}/embed": ["embeds:write"],
  "GET /api/v1/custom-dashboards/{id}/export": ["dashboards:read"],
  "GET /api/v1/custom-dashboards/{id}/embeds": ["dashboards:read"],
  "DELETE /api/v1/custom-dashboards/{id}/embeds/{embed_id}": ["embeds:write"],
  "POST /api/v1/custom-dashboards/{id}/publish": ["dashboards:publish"],
  "POST /api/v1/custom-dashboards/{id}/query": ["dashboards:read"],
  "GET /api/v1/custom-dashboards/{id}/rollups": ["dashboards:read"],
  "GET /api/v1/custom-dashboards/{id}/versions": ["dashboards:read"],
  "GET /api/v1/custom-dashboards/{id}/versions/{version}": ["dashboards:read"],
  "GET /api/v1/custom-dashboards/{id}/versions/{version}/diff": ["dashboards:read"],
  "POST /api/v1/custom-dashboards/{id}/versions/{version}/restore": ["dashboards:write"],
  "GET /api/v1/documents": ["documents:read"],
  "POST /api/v1/documents": ["documents:write"],
  "GET /api/v1/documents/embedding-config": ["documents:read"],
  "POST /api/v1/documents/search": ["documents:read"],
  "GET /api/v1/documents/upload-constraints": ["documents:read"],
  "GET /api/v1/documents/{id}": ["documents:read"],
  "DELETE /api/v1/documents/{id}": ["documents:write"],
  "GET /api/v1/documents/{id}/download": ["documents:read"],
  "GET /api/v1/documents/{id}/index": ["documents:read"],
  "POST /api/v1/documents/{id}/index": ["documents:write"],
  "DELETE /api/v1/documents/{id}/index": ["documents:write"],
  "POST /api/v1/documents/{id}/upload": ["documents:write"],
  "GET /api/v1/data/pulls": ["data:write"],
  "POST /api/v1/data/pulls": ["data:write"],
  "GET /api/v1/data/pulls/{id}": ["data:write"],
  "PATCH /api/v1/data/pulls/{id}": ["data:write"],
  "DELETE /api/v1/data/pulls/{id}": ["data:write"],
  "GET /api/v1/data/pulls/{id}/runs": ["data:write"],
  "POST /api/v1/data/pulls/{id}/runs": ["data:write"],
  "POST /api/v1/data/tables/{name}/rows": ["data:write"],
  "POST /api/v1/data/tables": ["data:write"],
  "DELETE /api/v1/data/tables/{name}": ["data:write"],
  "POST /api/v1/data/uploads": ["data:write"],
  "GET /api/v1/data/uploads/{id}": ["data:write"],
  "GET /api/v1/locations": ["dashboards:read", "documents:read"],
  "GET /api/v1/report-email-groups": [],
  "GET /api/v1/report-schedules": [],
  "POST /api/v1/report-schedules": [],
  "GET /api/v1/report-schedules/{id}": [],
  "PATCH /api/v1/report-schedules/{id}": [],
  "DELETE /api/v1/report-schedules/{id}": [],
  "POST /api/v1/report-schedules/{id}/send": [],
};

const acme: Record<string, string> = {};
const keys: Partial<Record<ApiKeyScope, string>> = {};

function paramsFor(endpoint: Endpoint): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [, name] of endpoint.path.matchAll(/\{(\w+)\}/g)) {
    if (name === "kind") params.kind = "email";
    else if (name === "embed_id") params.embed_id = acme.embed;
    else if (name === "version") params.version = "1";
    else if (endpoint.path.startsWith("/api/v1/custom-dashboards/")) params.id = acme.dashboard;
    else if (endpoint.path.startsWith("/api/v1/documents/")) params.id = acme.document;
    else if (endpoint.path.startsWith("/api/v1/users/")) params.id = "usr_acme_analyst";
    else if (endpoint.path.startsWith("/api/v1/api-keys/")) params.id = acme.apiKey;
    else params.id = `acme_missing_${name}`;
  }
  return params;
}

const urlFor = (endpoint: Endpoint, params: Record<string, string>) => endpoint.path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(params[name]));

beforeAll(async () => {
  const admin = await tokenFor("acme", "admin");
  const seed = await import("@/app/api/v1/custom-dashboards/%5Fseed/route");
  expect((await call(seed.POST, "POST", { token: admin })).status).toBeLessThan(300);
  const { system } = await getDb();
  const [dashboard] = await system.query<{ id: string }>(`SELECT id FROM dashboards WHERE org_id = 'org_acme' ORDER BY id LIMIT 1`);
  acme.dashboard = dashboard.id;
  const publish = await import("@/app/api/v1/custom-dashboards/[id]/publish/route");
  await call(publish.POST, "POST", { token: admin, params: { id: dashboard.id } });
  const embed = await import("@/app/api/v1/custom-dashboards/[id]/embed/route");
  const made = await call(embed.POST, "POST", { token: admin, params: { id: dashboard.id }, body: {} });
  acme.embed = made.json?.embed_id ?? (await system.query<{ id: string }>(`SELECT id FROM dashboard_embeds WHERE org_id = 'org_acme' LIMIT 1`))[0]?.id ?? "emb_missing";
  const documents = await import("@/app/api/v1/documents/route");
  const doc = await call(documents.POST, "POST", { token: admin, body: { filename: "key-matrix.txt" } });
  expect(doc.status).toBe(201);
  acme.document = doc.json.id;
  const apiKeys = await import("@/app/api/v1/api-keys/route");
  for (const scope of ApiKeyScope.options) {
    const key = await call(apiKeys.POST, "POST", { token: admin, body: { name: `matrix ${scope}`, scopes: [scope] } });
    expect(key.status, key.text).toBe(201);
    keys[scope] = key.json.key;
    acme.apiKey ??= key.json.id;
  }
}, 120_000);

const tenantEndpoints = ENDPOINTS.filter((e) => e.access !== "public");

describe("route × API key scope matrix", () => {
  it("declares the scope of every endpoint of the registry, and the registry agrees", () => {
    const actual = Object.fromEntries(tenantEndpoints.map((e) => [endpointKey(e), requiredScopes(e)]));
    const expected = Object.fromEntries(tenantEndpoints.map((e) => [endpointKey(e), SCOPES_OF[endpointKey(e)] ?? []]));
    expect(actual).toEqual(expected);
    expect(Object.keys(SCOPES_OF).filter((k) => !(k in actual)), "declared endpoints that are not in the registry").toEqual([]);
    // Every scope opens something, and most endpoints refuse keys outright.
    for (const scope of ApiKeyScope.options) expect(Object.values(actual).some((s) => s.includes(scope)), scope).toBe(true);
  });

  const cases = tenantEndpoints.flatMap((endpoint) => ApiKeyScope.options.map((scope) => [`${endpointKey(endpoint)} with a ${scope} key`, endpoint, scope] as const));

  it.each(cases)("%s", async (_name, endpoint, scope) => {
    const params = paramsFor(endpoint);
    const body = ["get", "delete"].includes(endpoint.method) ? undefined : {};
    const key = keys[scope]!;
    const res = await call(await handlerOf(endpoint), endpoint.method.toUpperCase(), urlFor(endpoint, params), { token: key, params, body });
    expect(res.text).not.toContain(key.slice(-43));
    expect(res.status, res.text.slice(0, 300)).not.toBe(500);
    expect(res.status, res.text.slice(0, 300)).not.toBe(401);
    if (requiredScopes(endpoint).includes(scope)) {
      expect(res.status, res.text.slice(0, 300)).not.toBe(403);
    } else {
      expect(res.status, res.text.slice(0, 300)).toBe(403);
      expect(res.json.detail).toMatch(/API key/);
    }
  });

  it("acme's key used to aim at the api-keys routes is still there and unrevoked", async () => {
    const { system } = await getDb();
    expect(await system.query("SELECT id FROM api_keys WHERE id = $1 AND revoked_at IS NULL", [acme.apiKey])).toHaveLength(1);
  });
});
