import { beforeAll, describe, expect, it, vi } from "vitest";
import * as keysRoute from "@/app/api/v1/api-keys/route";
import * as keyRoute from "@/app/api/v1/api-keys/[id]/route";
import * as dashboardsRoute from "@/app/api/v1/custom-dashboards/route";
import * as dashboardRoute from "@/app/api/v1/custom-dashboards/[id]/route";
import * as publishRoute from "@/app/api/v1/custom-dashboards/[id]/publish/route";
import * as embedRoute from "@/app/api/v1/custom-dashboards/[id]/embed/route";
import * as queryRoute from "@/app/api/v1/custom-dashboards/[id]/query/route";
import * as seedRoute from "@/app/api/v1/custom-dashboards/%5Fseed/route";
import * as documentsRoute from "@/app/api/v1/documents/route";
import * as embedQueryRoute from "@/app/api/v1/embed/query/route";
import * as uploadRoute from "@/app/api/v1/documents/[id]/upload/route";
import * as locationsRoute from "@/app/api/v1/locations/route";
import * as rulesRoute from "@/app/api/v1/notifications/admin/custom-rules/route";
import * as settingsRoute from "@/app/api/v1/organization/settings/route";
import { getDb } from "@/lib/db/client";
import { log } from "@/lib/log";
import { call, tokenFor } from "@/test/helpers";

let admin: string, analyst: string, globexAdmin: string;

beforeAll(async () => {
  [admin, analyst, globexAdmin] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst"), tokenFor("globex", "admin")]);
  expect((await call(seedRoute.POST, "POST", { token: admin })).status).toBeLessThan(300);
});

async function createKey(body: Record<string, unknown>, token = admin) {
  return call(keysRoute.POST, "POST", { token, body: { name: "test key", ...body } });
}

async function keyWith(scopes: string[], extra: Record<string, unknown> = {}): Promise<{ id: string; key: string }> {
  const made = await createKey({ scopes, ...extra });
  expect(made.status, made.text).toBe(201);
  return { id: made.json.id, key: made.json.key };
}

describe("API keys: create, list, revoke", () => {
  it("creates a key shown once, stored only as a keyed hash, listed without its secret", async () => {
    const made = await createKey({ name: "CI deploy", scopes: ["dashboards:read", "dashboards:write"] });
    expect(made.status, made.text).toBe(201);
    expect(made.json.key).toMatch(/^qk_[0-9a-f]{24}_[A-Za-z0-9_-]{43}$/);
    expect(made.json).toMatchObject({ name: "CI deploy", scopes: ["dashboards:read", "dashboards:write"], location_ids: null, expires_at: null, created_by: "usr_acme_admin", created_by_name: "Acme Retail Admin", last_used_at: null, revoked_at: null });
    expect(made.json.key.startsWith(made.json.prefix)).toBe(true);
    const secret = made.json.key.slice(made.json.prefix.length);

    const { system } = await getDb();
    const [row] = await system.query<{ secret_hash: Uint8Array; org_id: string }>("SELECT secret_hash, org_id FROM api_keys WHERE id = $1", [made.json.id]);
    expect(row.org_id).toBe("org_acme");
    expect(Buffer.from(row.secret_hash).length).toBe(32);
    const everything = JSON.stringify(await system.query("SELECT *, encode(secret_hash, 'hex') AS h, encode(secret_hash, 'base64') AS b FROM api_keys"));
    expect(everything).not.toContain(secret);

    const list = await call(keysRoute.GET, "GET", { token: admin });
    expect(list.status).toBe(200);
    const listed = list.json.items.find((k: { id: string }) => k.id === made.json.id);
    // The page says who made it by name, not by member id.
    expect(listed).toMatchObject({ name: "CI deploy", prefix: made.json.prefix, created_by_name: "Acme Retail Admin" });
    expect(listed.key).toBeUndefined();
    expect(list.text).not.toContain(secret);
    expect(list.json.total).toBeGreaterThanOrEqual(1);
  });

  it("only admins manage keys; keys cannot manage keys", async () => {
    expect((await createKey({ scopes: ["dashboards:read"] }, analyst)).status).toBe(403);
    expect((await call(keysRoute.GET, "GET", { token: analyst })).status).toBe(403);
    const { key } = await keyWith([...["dashboards:read", "dashboards:write", "dashboards:publish", "embeds:write", "documents:read", "documents:write"]]);
    expect((await call(keysRoute.GET, "GET", { token: key })).status).toBe(403);
    expect((await createKey({ scopes: ["dashboards:read"] }, key)).status).toBe(403);
  });

  it("validates scopes, locations and expiry", async () => {
    expect((await createKey({ scopes: [] })).status).toBe(422);
    expect((await createKey({ scopes: ["dashboards:admin"] })).status).toBe(422);
    expect((await createKey({ scopes: ["dashboards:read"], location_ids: [] })).status).toBe(422);
    const foreign = await createKey({ scopes: ["dashboards:read"], location_ids: ["loc_globex_nyc"] });
    expect(foreign.status).toBe(422);
    expect(foreign.json.detail[0].loc).toEqual(["body", "location_ids"]);
    expect((await createKey({ scopes: ["dashboards:read"], expires_at: "2020-01-01T00:00:00Z" })).status).toBe(422);
    // A location-scoped admin cannot give a key more locations than they see.
    const scopedAdmin = await tokenFor("acme", "admin", { locationIds: ["loc_acme_nyc"] });
    expect((await createKey({ scopes: ["dashboards:read"], location_ids: ["loc_acme_bos"] }, scopedAdmin)).status).toBe(422);
    const inherited = await createKey({ scopes: ["dashboards:read"] }, scopedAdmin);
    expect(inherited.json.location_ids).toEqual(["loc_acme_nyc"]);
  });

  it("revocation holds at once; revoked keys stay listed", async () => {
    const { id, key } = await keyWith(["dashboards:read"]);
    expect((await call(dashboardsRoute.GET, "GET", { token: key })).status).toBe(200);
    expect((await call(keyRoute.DELETE, "DELETE", { token: admin, params: { id } })).status).toBe(204);
    const after = await call(dashboardsRoute.GET, "GET", { token: key });
    expect(after.status).toBe(401);
    expect(after.text).not.toContain(key);
    expect((await call(keyRoute.DELETE, "DELETE", { token: admin, params: { id } })).status).toBe(204);
    const listed = (await call(keysRoute.GET, "GET", { token: admin })).json.items.find((k: { id: string }) => k.id === id);
    expect(listed.revoked_at).not.toBeNull();
  });

  it("another organization's admin cannot list or revoke acme's keys (404), and the key keeps working", async () => {
    const { id, key } = await keyWith(["dashboards:read"]);
    const list = await call(keysRoute.GET, "GET", { token: globexAdmin });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(id);
    expect(list.text).not.toContain("org_acme");
    expect((await call(keyRoute.DELETE, "DELETE", { token: globexAdmin, params: { id } })).status).toBe(404);
    expect((await call(keyRoute.DELETE, "DELETE", { token: admin, params: { id: "apk_000000000000000000000000" } })).status).toBe(404);
    expect((await call(dashboardsRoute.GET, "GET", { token: key })).status).toBe(200);
  });
});

describe("API keys as credentials", () => {
  it("refuses wrong secrets, revoked, expired, malformed and unknown keys with 401, never echoing them", async () => {
    const { id, key } = await keyWith(["dashboards:read"]);
    const publicId = id.replace("apk_", "");
    const { system } = await getDb();
    const expired = await keyWith(["dashboards:read"]);
    await system.query("UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1", [expired.id]);
    const globexKey = (await createKey({ scopes: ["dashboards:read"] }, globexAdmin)).json.key as string;
    const candidates = [
      `qk_${publicId}_${"A".repeat(43)}`, // wrong secret
      key.slice(0, -1) + (key.endsWith("A") ? "B" : "A"), // one character off
      expired.key,
      `qk_${"0".repeat(24)}_${key.slice(-43)}`, // unknown id
      `qk_${globexKey.slice(3, 27)}_${key.slice(-43)}`, // another organization's key id with this secret
      `qx_${key.slice(3)}`, // wrong prefix (then not a JWT either)
      key.slice(0, 20),
      `${key}x`,
    ];
    for (const token of candidates) {
      const res = await call(dashboardsRoute.GET, "GET", { token });
      expect(res.status, token).toBe(401);
      expect(res.text).not.toContain(token);
      expect(res.text).not.toContain(key.slice(-43));
    }
    expect((await call(dashboardsRoute.GET, "GET", { token: key })).status).toBe(200);
  });

  it("a key acts in its own organization only", async () => {
    const globexKey = (await createKey({ scopes: ["dashboards:read"] }, globexAdmin)).json.key as string;
    const list = await call(dashboardsRoute.GET, "GET", { token: globexKey });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain("sample-sales");
    expect((await call(dashboardRoute.GET, "GET", { token: globexKey, params: { id: "sample-sales" } })).status).toBe(404);
  });

  it("a dashboards:read key lists and queries dashboards, and nothing more", async () => {
    const { key } = await keyWith(["dashboards:read"]);
    expect((await call(dashboardsRoute.GET, "GET", { token: key })).status).toBe(200);
    expect((await call(dashboardRoute.GET, "GET", { token: key, params: { id: "sample-sales" } })).status).toBe(200);
    const query = await call(queryRoute.POST, "POST", { token: key, params: { id: "sample-sales" }, body: {} });
    expect(query.status, query.text).toBe(200);
    const denied = [
      await call(dashboardsRoute.POST, "POST", { token: key, body: { name: "x", slug: "by-key", spec_yaml: "x" } }),
      await call(publishRoute.POST, "POST", { token: key, params: { id: "sample-sales" } }),
      await call(embedRoute.POST, "POST", { token: key, params: { id: "sample-sales" }, body: {} }),
      await call(documentsRoute.POST, "POST", { token: key, body: { filename: "x.txt" } }),
      await call(uploadRoute.POST, "POST", { token: key, params: { id: "doc_missing" }, rawBody: "hello", headers: { "content-type": "text/plain" } }),
      await call(documentsRoute.GET, "GET", { token: key }),
      await call(rulesRoute.GET, "GET", { token: key }),
      await call(settingsRoute.GET, "GET", { token: key }),
    ];
    for (const res of denied) {
      expect(res.status, res.text).toBe(403);
      expect(res.text).not.toContain(key);
    }
  });

  it("publish needs dashboards:publish; write without publish cannot publish", async () => {
    const writer = await keyWith(["dashboards:read", "dashboards:write"]);
    expect((await call(publishRoute.POST, "POST", { token: writer.key, params: { id: "sample-sales" } })).status).toBe(403);
    const publisher = await keyWith(["dashboards:publish"]);
    const res = await call(publishRoute.POST, "POST", { token: publisher.key, params: { id: "sample-sales" } });
    expect(res.status, res.text).toBeLessThan(300);
  });

  it("an embeds:write key makes an embed that carries the key's locations, and nothing else", async () => {
    const { key } = await keyWith(["embeds:write"], { location_ids: ["loc_acme_nyc"] });
    const made = await call(embedRoute.POST, "POST", { token: key, params: { id: "sample-sales" }, body: {} });
    expect(made.status, made.text).toBe(201);
    const data = await call(embedQueryRoute.POST, "POST", { body: { token: made.json.token, filters: {} } });
    expect(data.status, data.text.slice(0, 300)).toBe(200);
    expect(data.text).toContain("loc_acme_nyc");
    for (const other of ["loc_acme_bos", "loc_acme_chi", "loc_acme_aus", "loc_acme_sfo"]) expect(data.text).not.toContain(other);
    expect((await call(dashboardsRoute.GET, "GET", { token: key })).status).toBe(403);
  });

  it("a key scoped to one location sees only that location", async () => {
    const { key } = await keyWith(["dashboards:read"], { location_ids: ["loc_acme_nyc"] });
    const res = await call(locationsRoute.GET, "GET", { token: key });
    expect(res.status).toBe(200);
    expect(res.json.items.map((l: { id: string }) => l.id)).toEqual(["loc_acme_nyc"]);
    expect(res.json.total).toBe(1);
    const unscoped = await keyWith(["documents:read"]);
    expect((await call(locationsRoute.GET, "GET", { token: unscoped.key })).json.total).toBe(5);
    const documentsOnly = await keyWith(["documents:write"]);
    expect((await call(locationsRoute.GET, "GET", { token: documentsOnly.key })).status).toBe(403);
  });

  it("records last use at most once a minute", async () => {
    const { id, key } = await keyWith(["dashboards:read"]);
    const { system } = await getDb();
    const lastUsed = async () => (await system.query<{ t: Date | null }>("SELECT last_used_at AS t FROM api_keys WHERE id = $1", [id]))[0].t;
    expect(await lastUsed()).toBeNull();
    await call(dashboardsRoute.GET, "GET", { token: key });
    const first = await lastUsed();
    expect(first).not.toBeNull();
    await call(dashboardsRoute.GET, "GET", { token: key });
    expect((await lastUsed())?.getTime()).toBe(first?.getTime());
    await system.query("UPDATE api_keys SET last_used_at = now() - interval '2 minutes' WHERE id = $1", [id]);
    await call(dashboardsRoute.GET, "GET", { token: key });
    expect((await lastUsed())!.getTime()).toBeGreaterThan(first!.getTime() - 1);
  });

  it("never writes a key to the log", async () => {
    const { key } = await keyWith(["dashboards:read"]);
    const spies = [vi.spyOn(log, "info"), vi.spyOn(log, "warn"), vi.spyOn(log, "error")];
    try {
      await call(dashboardsRoute.GET, "GET", { token: key });
      await call(dashboardsRoute.POST, "POST", { token: key, body: {} });
      await call(dashboardsRoute.GET, "GET", { token: `${key}x` });
      await call(dashboardsRoute.GET, "GET", `/api/v1/custom-dashboards?key=${key.slice(-43)}`, { token: `${key}x` });
      const logged = JSON.stringify(spies.flatMap((s) => s.mock.calls));
      expect(spies[0].mock.calls.length).toBeGreaterThan(0);
      expect(logged).not.toContain(key.slice(-43, -20));
    } finally {
      for (const s of spies) s.mockRestore();
    }
  });
});
