import { beforeAll, describe, expect, it } from "vitest";
import type { Endpoint } from "@/lib/endpoint";
import { ENDPOINTS } from "@/lib/api/registry";
import { Role } from "@/lib/access/roles";

const ROLES = Role.options;
import { getDb } from "@/lib/db/client";
import { call, tokenFor } from "@/test/helpers";
import { handlerOf } from "./registry-handlers";

/** acme's resources, made through the API as acme's admin; ids of kinds acme has none of are made up (they must still 404). */
const acme: Record<string, string> = {};

/** The acme id to put in each path parameter of an endpoint. */
function paramsFor(endpoint: Endpoint): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [, name] of endpoint.path.matchAll(/\{(\w+)\}/g)) {
    if (name === "kind") params.kind = "email";
    else if (name === "embed_id") params.embed_id = acme.embed;
    else if (endpoint.path.startsWith("/api/v1/custom-dashboards/")) params.id = acme.dashboard;
    else if (endpoint.path.startsWith("/api/v1/documents/")) params.id = acme.document;
    else if (endpoint.path.startsWith("/api/v1/users/") || endpoint.path.startsWith("/api/v1/members/")) params.id = acme.user;
    else if (endpoint.path.startsWith("/api/v1/locations/")) params.id = ACME_LOCATION;
    else if (endpoint.path.startsWith("/api/v1/api-keys/")) params.id = acme.apiKey;
    else params.id = `acme_missing_${name}`;
  }
  return params;
}

const urlFor = (endpoint: Endpoint, params: Record<string, string>) =>
  endpoint.path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(params[name]));

/** Strings that appear only in acme's data: any of them in a globex response is a leak. */
function acmeMarkers(): string[] {
  return ["org_acme", "loc_acme_", "usr_acme_", acme.dashboard, acme.embed, acme.document, "acme-secret-document", acme.apiKey].filter(Boolean);
}

/** acme's location that location endpoints with an id are called with. */
const ACME_LOCATION = "loc_acme_nyc";

/** acme's user whose sessions the matrix aims at (an admin may end a user's sessions, DELETE /api/v1/users/{id}/sessions). */
acme.user = "usr_acme_analyst";

beforeAll(async () => {
  const admin = await tokenFor("acme", "admin");
  const seed = await import("@/app/api/v1/custom-dashboards/%5Fseed/route");
  expect((await call(seed.POST, "POST", "/api/v1/custom-dashboards/_seed", { token: admin })).status).toBeLessThan(300);
  const { system } = await getDb();
  const [dashboard] = await system.query<{ id: string }>(`SELECT id FROM dashboards WHERE org_id = 'org_acme' ORDER BY id LIMIT 1`);
  acme.dashboard = dashboard.id;
  const publish = await import("@/app/api/v1/custom-dashboards/[id]/publish/route");
  await call(publish.POST, "POST", `/api/v1/custom-dashboards/${dashboard.id}/publish`, { token: admin, params: { id: dashboard.id } });
  const embed = await import("@/app/api/v1/custom-dashboards/[id]/embed/route");
  const made = await call(embed.POST, "POST", `/api/v1/custom-dashboards/${dashboard.id}/embed`, { token: admin, params: { id: dashboard.id }, body: {} });
  const [grant] = await system.query<{ id: string }>(`SELECT id FROM dashboard_embeds WHERE org_id = 'org_acme' LIMIT 1`);
  acme.embed = grant?.id ?? `acme_missing_embed_${made.status}`;
  const documents = await import("@/app/api/v1/documents/route");
  const doc = await call(documents.POST, "POST", "/api/v1/documents", { token: admin, body: { filename: "acme-secret-document.txt" } });
  expect(doc.status).toBe(201);
  acme.document = doc.json.id;
  const apiKeys = await import("@/app/api/v1/api-keys/route");
  const key = await call(apiKeys.POST, "POST", "/api/v1/api-keys", { token: admin, body: { name: "acme ci", scopes: ["dashboards:read"] } });
  expect(key.status).toBe(201);
  acme.apiKey = key.json.id;
}, 120_000);

const tenantEndpoints = ENDPOINTS.filter((e) => e.access !== "public");

describe("route × role × organization matrix", () => {
  it("covers every endpoint of the registry", () => {
    expect(ENDPOINTS.length).toBeGreaterThan(40);
  });

  it.each(tenantEndpoints.map((e) => [`${e.method.toUpperCase()} ${e.path}`, e] as const))("anonymous %s → 401", async (_name, endpoint) => {
    const params = paramsFor(endpoint);
    const body = ["get", "delete"].includes(endpoint.method) ? undefined : {};
    const res = await call(await handlerOf(endpoint), endpoint.method.toUpperCase(), urlFor(endpoint, params), { params, body });
    expect(res.status).toBe(401);
  });

  const cases = ENDPOINTS.flatMap((endpoint) => ROLES.map((role) => [`${endpoint.method.toUpperCase()} ${endpoint.path} as globex ${role}`, endpoint, role] as const));

  it.each(cases)("%s with acme's ids yields nothing of acme", async (_name, endpoint, role) => {
    const params = paramsFor(endpoint);
    const body = ["get", "delete"].includes(endpoint.method) ? undefined : endpoint.path === "/api/v1/embed/query" ? { token: "x".repeat(20) } : {};
    const res = await call(await handlerOf(endpoint), endpoint.method.toUpperCase(), urlFor(endpoint, params), { token: await tokenFor("globex", role), params, body });
    expect(res.status, res.text.slice(0, 300)).not.toBe(500);
    for (const marker of acmeMarkers()) expect(res.text, `${marker} leaked`).not.toContain(marker);
    // An id of acme in the path is never found, allowed or acted on.
    if (Object.values(params).some((v) => v === acme.dashboard || v === acme.document || v === acme.embed || v === acme.user || v === acme.apiKey || v === ACME_LOCATION)) {
      expect([401, 403, 404, 405, 409, 422], `status ${res.status}: ${res.text.slice(0, 200)}`).toContain(res.status);
    }
  });

  it("acme's resources are still there after every globex call (nothing was deleted or changed)", async () => {
    const { system } = await getDb();
    const rows = await system.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM dashboards WHERE id = $1)::int + (SELECT count(*) FROM documents WHERE id = $2)::int AS n`,
      [acme.dashboard, acme.document],
    );
    expect(rows[0].n).toBe(2);
    // No acme session was ended by a globex admin (the epoch of every acme user is as seeded).
    const moved = await system.query("SELECT id FROM users WHERE org_id = 'org_acme' AND session_epoch <> 0");
    expect(moved).toEqual([]);
    // No acme member or location was changed (role, status, name, archive).
    expect(await system.query("SELECT id FROM users WHERE org_id = 'org_acme' AND (status <> 'active' OR id = 'usr_acme_analyst' AND role <> 'analyst')")).toEqual([]);
    expect(await system.query("SELECT id FROM locations WHERE id = $1 AND archived_at IS NULL AND code = 'NYC'", [ACME_LOCATION])).toHaveLength(1);
    // acme's API key was neither revoked nor deleted.
    expect(await system.query("SELECT id FROM api_keys WHERE id = $1 AND revoked_at IS NULL", [acme.apiKey])).toHaveLength(1);
  });
});
