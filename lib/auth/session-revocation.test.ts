import { describe, expect, it } from "vitest";
import * as dashboards from "@/app/api/v1/custom-dashboards/route";
import { getDb } from "@/lib/db/client";
import { call, sessionCookieFor } from "@/test/helpers";
import { NextRequest } from "next/server";
import { authOptions } from "./session";
import { signInGate } from "@/lib/api/sign-in-gate";
import { isSessionRevoked, revokeSession } from "./session-revocation";

const ORIGIN = "http://localhost:3000";
const list = (cookie: string) => call(dashboards.GET, "GET", "/api/v1/custom-dashboards", { headers: { cookie } });
/**
 * What app/api/auth/[...nextauth] runs for `POST /api/auth/signout` before handing over to next-auth
 * (which then clears the cookie; next-auth itself needs Next.js's request scope, so it is not called here).
 * null: passed on to next-auth.
 */
const signOut = (cookie: string, origin: string | null = ORIGIN) =>
  signInGate(
    new NextRequest(`${ORIGIN}/api/auth/signout`, {
      method: "POST",
      headers: { cookie, "content-type": "application/x-www-form-urlencoded", ...(origin ? { origin } : {}) },
      body: "csrfToken=x&callbackUrl=%2Fsignin",
    }),
    ["signout"],
  );

describe("signing out revokes the session on the server", () => {
  it("a signed-out cookie is refused with 401 at once; another session of the same user is not", async () => {
    const sid = crypto.randomUUID();
    const cookie = await sessionCookieFor("acme", "admin", [], { sid });
    const other = await sessionCookieFor("acme", "admin");
    expect((await list(cookie)).status).toBe(200);
    expect(await signOut(cookie)).toBeNull();
    expect(await isSessionRevoked(sid)).toBe(true);
    const after = await list(cookie);
    expect(after.status).toBe(401);
    expect((await list(other)).status).toBe(200);
    // The sign-out is in the audit log, once; signing out the ended session again records nothing more.
    const { system } = await getDb();
    const audited = () => system.query<{ actor_id: string; target_id: string; after: unknown }>("SELECT actor_id, target_id, after FROM audit_events WHERE action = 'session.sign_out'");
    expect(await audited()).toEqual([{ actor_id: "usr_acme_admin", target_id: "usr_acme_admin", after: { sessions: "this one" } }]);
    expect(await signOut(cookie)).toBeNull();
    expect(await audited()).toHaveLength(1);
  });

  it("a cross-site sign-out is refused with 403 and revokes nothing", async () => {
    const sid = crypto.randomUUID();
    const cookie = await sessionCookieFor("acme", "analyst", [], { sid });
    const out = await signOut(cookie, "https://evil.example");
    expect(out?.status).toBe(403);
    expect((await out?.json()).detail).toMatch(/Cross-site request refused/);
    expect(await isSessionRevoked(sid)).toBe(false);
    expect((await list(cookie)).status).toBe(200);
  });

  it("a cookie without a session id (from before revocation existed) is refused", async () => {
    expect((await list(await sessionCookieFor("acme", "admin", [], { sid: null }))).status).toBe(401);
  });

  it("a signed-out session cannot be refreshed into a later cookie", async () => {
    const jwt = authOptions().callbacks!.jwt!;
    const sid = crypto.randomUUID();
    const token = { uid: "usr_acme_admin", org: "acme", role: "admin", sid, epoch: 0 };
    await expect(jwt({ token, trigger: "update" } as never)).resolves.toMatchObject({ sid });
    await revokeSession(sid);
    await expect(jwt({ token, trigger: "update" } as never)).rejects.toThrow(/signed out/);
    await expect(jwt({ token: { uid: "usr_acme_admin", org: "acme", role: "admin", epoch: 0 } } as never)).rejects.toThrow(/signed out/);
  });

  it("keeps a record one session lifetime and deletes expired ones on the next sign-out", async () => {
    const { system } = await getDb();
    await system.query("INSERT INTO quarry_revoked_sessions (session_id, expires_at) VALUES ('old-session', now() - interval '1 second')");
    const sid = crypto.randomUUID();
    await revokeSession(sid);
    const rows = await system.query<{ session_id: string; hours: number }>(
      "SELECT session_id, round(extract(epoch FROM expires_at - revoked_at) / 3600)::int AS hours FROM quarry_revoked_sessions WHERE session_id IN ('old-session', $1)",
      [sid],
    );
    expect(rows).toEqual([{ session_id: sid, hours: 12 }]);
  });
});
