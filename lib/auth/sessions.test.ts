import crypto from "node:crypto";
import { describe, expect, it } from "vitest";
import * as dashboards from "@/app/api/v1/custom-dashboards/route";
import * as locations from "@/app/api/v1/locations/route";
import * as mySessions from "@/app/api/v1/me/sessions/route";
import * as userSessions from "@/app/api/v1/users/[id]/sessions/route";
import { getDb } from "@/lib/db/client";
import { DEMO_PASSWORD } from "@/lib/demo/seed";
import { call, tokenFor } from "@/test/helpers";
import { NextAuthBrowser } from "@/test/support/next-auth-driver";
import type { Role } from "@/lib/access/roles";
import { authOptions } from "./session";

// Sessions follow their user (issue 26): every request's session is checked against the user's
// current row, so a change there ends the session at once. Each test signs in for real, through
// next-auth's credentials callback, as a user of its own (made here), so tests do not share state.

const ORIGIN = "http://localhost:3000";

interface TestUser {
  id: string;
  email: string;
}

/** A new user of `org` (the seeded users' password), with this role and location scope. */
async function makeUser(org: "acme" | "globex", role: Role, locationIds: string[] = []): Promise<TestUser> {
  const suffix = crypto.randomBytes(4).toString("hex");
  const user = { id: `usr_${org}_t_${suffix}`, email: `t-${suffix}@${org}.test` };
  const { system } = await getDb();
  await system.query(
    `INSERT INTO users (id, org_id, email, name, role, location_ids, password_hash)
     SELECT $1, org_id, $2, 'Test user', $3, $4, password_hash FROM users WHERE id = $5`,
    [user.id, user.email, role, locationIds, `usr_${org}_admin`],
  );
  return user;
}

async function signedIn(user: TestUser): Promise<NextAuthBrowser> {
  const browser = new NextAuthBrowser(ORIGIN);
  const answer = await browser.signIn(user.email, DEMO_PASSWORD);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(browser.sessionToken(), "signed in").toBeTruthy();
  return browser;
}

/** A cookie-authenticated API call, as the browser makes it. */
const listDashboards = (browser: NextAuthBrowser) => call(dashboards.GET, "GET", "/api/v1/custom-dashboards", { headers: { cookie: browser.cookieHeader() } });
const listLocations = (browser: NextAuthBrowser) => call(locations.GET, "GET", "/api/v1/locations", { headers: { cookie: browser.cookieHeader() } });
const endMine = (headers: Record<string, string>, token?: string) => call(mySessions.DELETE, "DELETE", "/api/v1/me/sessions", { headers, token });
const endTheirs = (id: string, options: { headers?: Record<string, string>; token?: string }) =>
  call(userSessions.DELETE, "DELETE", `/api/v1/users/${encodeURIComponent(id)}/sessions`, { params: { id }, ...options });

async function sql(text: string, params: unknown[] = []) {
  const { system } = await getDb();
  return system.query(text, params);
}

const epochOf = async (id: string) => ((await sql("SELECT session_epoch FROM users WHERE id = $1", [id])) as { session_epoch: number }[])[0]?.session_epoch;

describe("a session follows its user", () => {
  it("a role change ends the session at once, and changing the role back does not revive it", async () => {
    const user = await makeUser("acme", "analyst");
    const browser = await signedIn(user);
    const other = await signedIn(await makeUser("acme", "analyst"));
    expect((await listDashboards(browser)).status).toBe(200);
    await sql("UPDATE users SET role = 'admin' WHERE id = $1", [user.id]);
    const after = await listDashboards(browser);
    expect(after.status).toBe(401);
    expect(after.json).toEqual({ detail: expect.any(String) });
    await sql("UPDATE users SET role = 'analyst' WHERE id = $1", [user.id]);
    expect((await listDashboards(browser)).status).toBe(401);
    // Another user's session is untouched; the changed user signs in again with the new role.
    expect((await listDashboards(other)).status).toBe(200);
    expect((await listDashboards(await signedIn(user))).status).toBe(200);
  });

  it("a location change ends the session at once (narrowed, widened to every location, or another list)", async () => {
    for (const next of [["loc_acme_nyc"], [], ["loc_acme_nyc", "loc_acme_sfo"]]) {
      const user = await makeUser("acme", "general_manager", ["loc_acme_nyc", "loc_acme_chi"]);
      const browser = await signedIn(user);
      const before = await listLocations(browser);
      expect(before.status).toBe(200);
      expect(before.json.items.map((l: { id: string }) => l.id).sort()).toEqual(["loc_acme_chi", "loc_acme_nyc"]);
      await sql("UPDATE users SET location_ids = $2 WHERE id = $1", [user.id, next]);
      expect((await listLocations(browser)).status, `-> ${JSON.stringify(next)}`).toBe(401);
      // Signed in again, the new scope applies.
      const again = await listLocations(await signedIn(user));
      expect(again.json.items.length).toBe(next.length === 0 ? 5 : next.length);
    }
  });

  it("a deletion ends the session at once", async () => {
    const user = await makeUser("globex", "admin");
    const browser = await signedIn(user);
    expect((await listDashboards(browser)).status).toBe(200);
    await sql("DELETE FROM users WHERE id = $1", [user.id]);
    expect((await listDashboards(browser)).status).toBe(401);
  });

  it("a password change ends the user's sessions", async () => {
    const user = await makeUser("acme", "analyst");
    const browser = await signedIn(user);
    await sql("UPDATE users SET password_hash = (SELECT password_hash FROM users WHERE id = 'usr_globex_admin') WHERE id = $1", [user.id]);
    expect((await listDashboards(browser)).status).toBe(401);
  });

  it("an unrelated change (name) leaves the session alone", async () => {
    const user = await makeUser("acme", "analyst");
    const browser = await signedIn(user);
    await sql("UPDATE users SET name = 'Renamed' WHERE id = $1", [user.id]);
    expect((await listDashboards(browser)).status).toBe(200);
  });

  it("/api/auth/session renews a current session, and never a stale one (the cookie is cleared instead)", async () => {
    for (const change of [
      (id: string) => sql("UPDATE users SET role = 'general_manager' WHERE id = $1", [id]),
      (id: string) => sql("UPDATE users SET location_ids = '{loc_acme_nyc}' WHERE id = $1", [id]),
      (id: string) => sql("DELETE FROM users WHERE id = $1", [id]),
    ]) {
      const user = await makeUser("acme", "analyst");
      const browser = await signedIn(user);
      const fresh = await browser.session();
      expect(fresh.body).toMatchObject({ user: { id: user.id, role: "analyst" } });
      expect(fresh.setCookies.some((c) => c.startsWith("next-auth.session-token=") && !/Max-Age=0/i.test(c))).toBe(true);
      const cookie = browser.sessionToken();
      await change(user.id);
      const stale = await browser.session();
      expect(stale.body).toEqual({});
      // No later cookie: the session cookie is cleared, not re-issued.
      const issued = stale.setCookies.filter((c) => c.startsWith("next-auth.session-token="));
      expect(issued.length).toBeGreaterThan(0);
      for (const line of issued) expect(line).toMatch(/^next-auth\.session-token=;|Max-Age=0|Expires=Thu, 01 Jan 1970/i);
      expect(browser.sessionToken()).toBeUndefined();
      // The old cookie, replayed, is refused too.
      const replay = await call(dashboards.GET, "GET", "/api/v1/custom-dashboards", { headers: { cookie: `next-auth.session-token=${cookie}` } });
      expect(replay.status).toBe(401);
    }
  });

  it("the refresh callback refuses a session whose claims no longer match the user", async () => {
    const jwt = authOptions().callbacks!.jwt!;
    const token = { uid: "usr_acme_analyst", org: "acme", role: "analyst", sid: crypto.randomUUID(), epoch: await epochOf("usr_acme_analyst") };
    await expect(jwt({ token } as never)).resolves.toMatchObject({ sid: token.sid });
    for (const stale of [{ role: "admin" }, { org: "globex" }, { locations: ["loc_acme_nyc"] }, { epoch: token.epoch + 1 }, { uid: "usr_nobody" }, { locations: null }, { epoch: undefined }]) {
      await expect(jwt({ token: { ...token, ...stale } } as never), JSON.stringify(stale)).rejects.toThrow(/signed out|changed or deleted/);
    }
  });
});

describe("sign out everywhere", () => {
  it("ends every session of the caller, this one included, on the next request; a new sign-in works", async () => {
    const user = await makeUser("acme", "analyst");
    const [laptop, phone] = [await signedIn(user), await signedIn(user)];
    const bystander = await signedIn(await makeUser("acme", "analyst"));
    const ended = await endMine({ cookie: laptop.cookieHeader(), origin: ORIGIN });
    expect(ended.status).toBe(204);
    expect(ended.text).toBe("");
    expect((await listDashboards(laptop)).status).toBe(401);
    expect((await listDashboards(phone)).status).toBe(401);
    expect((await phone.session()).body).toEqual({});
    expect((await listDashboards(bystander)).status).toBe(200);
    expect((await listDashboards(await signedIn(user))).status).toBe(200);
  });

  it("is refused from another site (CSRF) and then ends nothing", async () => {
    const user = await makeUser("acme", "analyst");
    const browser = await signedIn(user);
    const before = await epochOf(user.id);
    const res = await endMine({ cookie: browser.cookieHeader(), origin: "https://evil.example" });
    expect(res.status).toBe(403);
    expect(await epochOf(user.id)).toBe(before);
    expect((await listDashboards(browser)).status).toBe(200);
  });

  it("a bearer caller ends their browser sessions too; without credentials it is 401", async () => {
    const browser = await signedIn({ id: "usr_globex_analyst", email: "analyst@globex.test" });
    expect((await endMine({}, await tokenFor("globex", "analyst"))).status).toBe(204);
    expect((await listDashboards(browser)).status).toBe(401);
    expect((await endMine({})).status).toBe(401);
  });
});

describe("an admin ends a user's sessions", () => {
  it("for a user of the admin's organization: that user's sessions end, the admin's do not", async () => {
    const user = await makeUser("acme", "general_manager", ["loc_acme_nyc"]);
    const theirs = await signedIn(user);
    const admin = await signedIn(await makeUser("acme", "admin"));
    const res = await endTheirs(user.id, { headers: { cookie: admin.cookieHeader(), origin: ORIGIN } });
    expect(res.status).toBe(204);
    expect((await listDashboards(theirs)).status).toBe(401);
    expect((await listDashboards(admin)).status).toBe(200);
    // By bearer token as well.
    const again = await signedIn(user);
    expect((await endTheirs(user.id, { token: await tokenFor("acme", "admin") })).status).toBe(204);
    expect((await listDashboards(again)).status).toBe(401);
  });

  it("another organization's admin gets 404 and ends nothing; so does an unknown id; a non-admin gets 403", async () => {
    const user = await makeUser("acme", "analyst");
    const browser = await signedIn(user);
    const before = await epochOf(user.id);
    for (const caller of [{ token: await tokenFor("globex", "admin") }, { headers: { cookie: (await signedIn(await makeUser("globex", "admin"))).cookieHeader(), origin: ORIGIN } }]) {
      const res = await endTheirs(user.id, caller);
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ detail: "User not found" });
    }
    const unknown = await endTheirs("usr_nobody", { token: await tokenFor("acme", "admin") });
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({ detail: "User not found" });
    for (const role of ["analyst", "general_manager"] as const) {
      expect((await endTheirs(user.id, { token: await tokenFor("acme", role) })).status).toBe(403);
    }
    expect(await epochOf(user.id)).toBe(before);
    expect((await listDashboards(browser)).status).toBe(200);
  });
});
