import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionCookieFor, tokenFor } from "@/test/helpers";
import { freshDatabase, onPostgres, querySql, startProcess, type Replica } from "./replicas";

// Several app processes on one PostgreSQL database, as behind a load balancer (issue 14 §2–3).
// The embedded engine belongs to one process, so there is nothing to test there.
describe.skipIf(!onPostgres)("replicas on one PostgreSQL database", () => {
  let db: Awaited<ReturnType<typeof freshDatabase>>;
  let replicas: Replica[] = [];
  let admin: string;

  beforeAll(async () => {
    db = await freshDatabase();
    // Written before the replicas start: they share the data folder (the local issuer's key), as
    // replicas share the identity provider in production.
    admin = await tokenFor("acme", "admin");
    const env = {
      DATABASE_URL: db.url,
      QUARRY_DATA_DIR: process.env.QUARRY_DATA_DIR!,
      NOTIFICATIONS_CONFIG: JSON.stringify({ in_process_worker: false }),
    };
    // Three at once on an empty database: migrations and demo data race unless start-up takes turns.
    const started = await Promise.allSettled([0, 1, 2].map(() => startProcess("test/replica.ts", env)));
    replicas = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
    const failures = started.flatMap((s) => (s.status === "rejected" ? [String(s.reason)] : []));
    expect(failures).toEqual([]);
  }, 300_000);

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await db?.drop();
  });

  it("all three start on a fresh database, and the demo data exists once", async () => {
    expect(replicas).toHaveLength(3);
    const [counts] = await querySql<{ orgs: number; dashboards: number; versions: number; documents: number; migrations: number }>(
      db.url,
      `SELECT (SELECT count(*)::int FROM organizations) AS orgs, (SELECT count(*)::int FROM dashboards) AS dashboards,
              (SELECT count(*)::int FROM dashboard_versions) AS versions, (SELECT count(*)::int FROM documents) AS documents,
              (SELECT count(*)::int FROM _quarry_migrations) AS migrations`,
    );
    const demoFiles = fs.readdirSync("docs/demo-documents").length;
    expect(counts).toEqual({ orgs: 2, dashboards: 2, versions: 2, documents: 2 * demoFiles, migrations: fs.readdirSync("prisma/migrations").length });
  });

  it("counts a rate limit across replicas: 10 per minute in all, however the calls are spread", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 13; i++) {
      const res = await replicas[i % 3].call("app/api/v1/custom-dashboards/%5Fseed", "POST", "/api/v1/custom-dashboards/_seed", { token: admin });
      statuses.push(res.status);
    }
    expect(statuses.filter((s) => s === 200 || s === 201)).toHaveLength(10);
    expect(statuses.slice(10)).toEqual([429, 429, 429]);
  });

  it("a revoke on one replica is refused on another at once, even with its results cached", async () => {
    const [a, b] = replicas;
    const created = await a.call("app/api/v1/custom-dashboards/[id]/embed", "POST", { token: admin, params: { id: "sample-sales" }, body: {} });
    expect(created.status).toBe(201);
    const query = () => b.call("app/api/v1/embed/query", "POST", "/api/v1/embed/query", { body: { token: created.json.token, filters: {} } });
    expect((await query()).status).toBe(200);
    expect((await query()).status).toBe(200);
    const revoked = await a.call("app/api/v1/custom-dashboards/[id]/embeds/[embed_id]", "DELETE", { token: admin, params: { id: created.json.dashboard_id ?? "sample-sales", embed_id: created.json.embed_id } });
    expect(revoked.status).toBe(204);
    const after = await query();
    expect(after.status).toBe(401);
    expect(after.json.detail).toMatch(/revoked/);
  });

  it("an API key revoked on one replica is refused by the others at once", async () => {
    const [a, b, c] = replicas;
    const made = await a.call("app/api/v1/api-keys", "POST", "/api/v1/api-keys", { token: admin, body: { name: "replicas", scopes: ["dashboards:read"] } });
    expect(made.status, JSON.stringify(made.json)).toBe(201);
    const list = (replica: Replica) => replica.call("app/api/v1/custom-dashboards", "GET", "/api/v1/custom-dashboards", { token: made.json.key });
    expect((await list(b)).status).toBe(200);
    expect((await list(c)).status).toBe(200);
    const revoked = await a.call("app/api/v1/api-keys/[id]", "DELETE", { token: admin, params: { id: made.json.id } });
    expect(revoked.status).toBe(204);
    expect((await list(b)).status).toBe(401);
    expect((await list(c)).status).toBe(401);
    expect((await list(a)).status).toBe(401);
  });

  it("a sign-out on one replica is refused on another at once: the same session cookie gets 401", async () => {
    const [a, b, c] = replicas;
    // Cookies are verified with the application secret every replica derives from the shared data folder.
    const cookie = await sessionCookieFor("acme", "analyst");
    const other = await sessionCookieFor("acme", "analyst");
    const list = (replica: Replica, session: string) => replica.call("app/api/v1/custom-dashboards", "GET", "/api/v1/custom-dashboards", { headers: { cookie: session } });
    expect((await list(b, cookie)).status).toBe(200);
    const origin = `http://127.0.0.1:${a.port}`;
    const signedOut = await a.call("test/topology/sign-out", "POST", "/api/auth/signout", { headers: { cookie, origin, host: `127.0.0.1:${a.port}` } });
    expect(signedOut.status).toBe(204);
    const after = await list(b, cookie);
    expect(after.status).toBe(401);
    expect((await list(c, cookie)).status).toBe(401);
    // Only that sign-in ends: the same user's other session goes on.
    expect((await list(b, other)).status).toBe(200);
  });
});

if (!onPostgres) {
  describe("replicas on one PostgreSQL database", () => {
    it.skip("skipped: no PostgreSQL (QUARRY_TEST_ENGINE=postgres with QUARRY_TEST_DATABASE_URL)", () => undefined);
  });
}
