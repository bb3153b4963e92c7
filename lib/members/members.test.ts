import crypto from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import * as membersRoute from "@/app/api/v1/members/route";
import * as memberRoute from "@/app/api/v1/members/[id]/route";
import * as memberResetRoute from "@/app/api/v1/members/[id]/password-reset/route";
import * as invitationsRoute from "@/app/api/v1/members/invitations/route";
import * as invitationRoute from "@/app/api/v1/members/invitations/[id]/route";
import * as acceptRoute from "@/app/api/v1/invitations/accept/route";
import * as resetsRoute from "@/app/api/v1/password-resets/route";
import * as resetCompleteRoute from "@/app/api/v1/password-resets/complete/route";
import * as locationsRoute from "@/app/api/v1/locations/route";
import * as locationRoute from "@/app/api/v1/locations/[id]/route";
import * as apiKeysRoute from "@/app/api/v1/api-keys/route";
import * as outboxRoute from "@/app/api/v1/notifications/admin/demo-outbox/route";
import { findUserForLogin } from "@/lib/auth/directory";
import { issueLocalToken } from "@/lib/auth/local-issuer";
import { verifyPassword } from "@/lib/auth/password";
import { getDb } from "@/lib/db/client";
import { PEER_HEADER, PEER_KEY_HEADER } from "@/lib/security/client-address";
import { call, tokenFor } from "@/test/helpers";
import { NextAuthBrowser } from "@/test/support/next-auth-driver";
import { requestPasswordReset } from "./password-resets";

// Public endpoints are rate-limited per address: each call below comes from an address of its own, as our server stamps it.
const PEER_KEY = "members-test-peer-key-0123456789";
(globalThis as Record<symbol, unknown>)[Symbol.for("quarry.peerKey")] = PEER_KEY;
let peer = 0;
const fromNewPeer = () => ({ [PEER_HEADER]: `198.51.${Math.floor(++peer / 250)}.${(peer % 250) + 1}`, [PEER_KEY_HEADER]: PEER_KEY });

let acme: string, globex: string, acmeAnalyst: string, scopedAdmin: string;

beforeAll(async () => {
  [acme, globex, acmeAnalyst, scopedAdmin] = await Promise.all([
    tokenFor("acme", "admin"),
    tokenFor("globex", "admin"),
    tokenFor("acme", "analyst"),
    tokenFor("acme", "admin", { locationIds: ["loc_acme_nyc"] }),
  ]);
});

const PASSWORD = "correct horse battery";
const tokenOf = (link: string) => link.split("/").pop()!;
const unique = (name: string) => `${name}.${crypto.randomBytes(4).toString("hex")}@example.test`;

async function invite(body: Record<string, unknown>, token = acme) {
  return call(invitationsRoute.POST, "POST", { token, body: { role: "analyst", ...body } });
}

async function accept(token: string, password = PASSWORD, name = "New Member") {
  return call(acceptRoute.POST, "POST", { body: { token, name, password }, headers: fromNewPeer() });
}

async function inviteAndAccept(role = "analyst", locationIds: string[] = []) {
  const email = unique(role);
  const made = await invite({ email, role, location_ids: locationIds });
  expect(made.status, made.text).toBe(201);
  const done = await accept(tokenOf(made.json.link));
  expect(done.status, done.text).toBe(201);
  const user = (await findUserForLogin(email))!;
  return { email, id: user.id };
}

const patch = (id: string, body: Record<string, unknown>, token = acme) => call(memberRoute.PATCH, "PATCH", { token, params: { id }, body });

async function signIn(email: string, password = PASSWORD) {
  const browser = new NextAuthBrowser();
  const answer = await browser.signIn(email, password);
  return { browser, ok: answer.status === 200 && Boolean(browser.sessionToken()) };
}
const listWith = (browser: NextAuthBrowser) => call(locationsRoute.GET, "GET", { headers: { cookie: browser.cookieHeader() } });

describe("invitations", () => {
  it("invite → accept → sign in, with the invited role and locations; the link is stored only as a hash", async () => {
    const email = unique("invitee");
    const made = await invite({ email, role: "general_manager", location_ids: ["loc_acme_nyc"] });
    expect(made.status, made.text).toBe(201);
    expect(made.json).toMatchObject({ email, role: "general_manager", location_ids: ["loc_acme_nyc"], status: "pending", created_by: "usr_acme_admin" });
    expect(made.json.link).toMatch(/\/invite\/[A-Za-z0-9_-]{43}$/);
    expect(["demo_outbox", "sent", "failed"]).toContain(made.json.delivery);
    const token = tokenOf(made.json.link);
    const { system } = await getDb();
    expect(JSON.stringify(await system.query("SELECT *, encode(token_hash, 'hex') AS h FROM member_invitations"))).not.toContain(token);

    const done = await accept(token);
    expect(done.status, done.text).toBe(201);
    expect(done.json).toEqual({ email, organization: "Acme Retail" });
    const { browser, ok } = await signIn(email);
    expect(ok).toBe(true);
    const seen = await listWith(browser);
    expect(seen.status).toBe(200);
    expect(seen.json.items.map((l: { id: string }) => l.id)).toEqual(["loc_acme_nyc"]);

    const list = await call(membersRoute.GET, "GET", { token: acme, headers: {} });
    const member = list.json.items.find((m: { email: string }) => m.email === email);
    expect(member).toMatchObject({ role: "general_manager", location_ids: ["loc_acme_nyc"], status: "active" });
    expect(member.last_sign_in_at).not.toBeNull();
    const invitations = await call(invitationsRoute.GET, "GET", { token: acme });
    expect(invitations.json.items.find((i: { id: string }) => i.id === made.json.id).status).toBe("accepted");
  });

  it("without an e-mail channel of its own, invitations and password resets are kept in the demo outbox, link included", async () => {
    const { system } = await getDb();
    const outbox = async (token: string) => (await call(outboxRoute.GET, "GET", { token })).json.items as { recipient: string; rule_key: string; subject: string; body: string }[];
    // acme has the demo's outbox channel; globex is made to have no e-mail channel at all.
    await system.query("DELETE FROM notification_channel_configs WHERE org_id = 'org_globex' AND kind = 'email'");
    for (const [token, org] of [[acme, "Acme Retail"], [globex, "Globex"]] as const) {
      const email = unique("outboxed");
      const made = await invite({ email }, token);
      expect(made.status, made.text).toBe(201);
      expect(made.json.delivery).toBe("demo_outbox");
      const kept = (await outbox(token)).find((m) => m.recipient === email);
      expect(kept, org).toMatchObject({ rule_key: "account: invitation", subject: expect.stringContaining(org) });
      expect(kept!.body).toContain(made.json.link);
      expect((await accept(tokenOf(made.json.link))).status).toBe(201);

      const reset = await call(resetsRoute.POST, "POST", { body: { email }, headers: fromNewPeer() });
      expect(reset.status).toBe(202);
      // The request answers before the e-mail is written (its time tells nothing): wait for the message.
      let mail: { rule_key: string; body: string } | undefined;
      for (let i = 0; i < 200 && !mail; i++) {
        mail = (await outbox(token)).find((m) => m.recipient === email && m.rule_key === "account: password_reset");
        if (!mail) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(mail?.body, org).toMatch(/\/reset-password\/[A-Za-z0-9_-]{43}/);
    }
    // Another organization's outbox shows none of them.
    expect((await outbox(globex)).every((m) => !m.subject.includes("Acme"))).toBe(true);
  });

  it("a link works once: reuse, and two accepts at once, make one account", async () => {
    const email = unique("once");
    const made = await invite({ email });
    const token = tokenOf(made.json.link);
    const both = await Promise.all([accept(token, PASSWORD, "First"), accept(token, "another password 2", "Second")]);
    expect(both.map((r) => r.status).sort()).toEqual([201, 410]);
    expect((await accept(token)).status).toBe(410);
    const { system } = await getDb();
    expect(await system.query("SELECT name FROM users WHERE email = $1", [email])).toHaveLength(1);
  });

  it("an expired, revoked or guessed link is refused, and a re-invitation replaces the pending one", async () => {
    const email = unique("expired");
    const first = await invite({ email });
    const second = await invite({ email });
    expect((await accept(tokenOf(first.json.link))).status).toBe(410);
    const { system } = await getDb();
    await system.query("UPDATE member_invitations SET expires_at = now() - interval '1 second' WHERE id = $1", [second.json.id]);
    const expired = await accept(tokenOf(second.json.link));
    expect(expired.status).toBe(410);
    expect(expired.json.detail).toMatch(/expired/);

    const third = await invite({ email });
    expect((await call(invitationRoute.DELETE, "DELETE", { token: acme, params: { id: third.json.id } })).status).toBe(204);
    expect((await accept(tokenOf(third.json.link))).status).toBe(410);

    const guessed = await accept(crypto.randomBytes(32).toString("base64url"));
    expect(guessed.status).toBe(404);
    expect((await accept("short")).status).toBe(422);
    expect(await system.query("SELECT 1 FROM users WHERE email = $1", [email])).toHaveLength(0);
  });

  it("another organization sees and revokes none of acme's invitations or members; a foreign location or member is refused", async () => {
    const made = await invite({ email: unique("private") });
    const list = await call(invitationsRoute.GET, "GET", { token: globex });
    expect(list.text).not.toContain(made.json.id);
    expect((await call(invitationRoute.DELETE, "DELETE", { token: globex, params: { id: made.json.id } })).status).toBe(404);
    const members = await call(membersRoute.GET, "GET", { token: globex });
    expect(members.status).toBe(200);
    expect(members.text).not.toMatch(/acme/i);
    // globex's admin grants a role or a location to acme's member, or an acme location to their own invitee.
    expect((await patch("usr_acme_analyst", { role: "admin" }, globex)).status).toBe(404);
    expect((await call(memberRoute.DELETE, "DELETE", { token: globex, params: { id: "usr_acme_analyst" } })).status).toBe(404);
    const foreign = await invite({ email: unique("foreign"), location_ids: ["loc_acme_nyc"] }, globex);
    expect(foreign.status).toBe(422);
    expect(foreign.json.detail[0].loc).toEqual(["body", "location_ids"]);
    expect((await patch("usr_globex_analyst", { location_ids: ["loc_acme_nyc"] }, globex)).status).toBe(422);
    const { system } = await getDb();
    expect((await system.query<{ role: string }>("SELECT role FROM users WHERE id = 'usr_acme_analyst'"))[0].role).toBe("analyst");
  });

  it("inviting an address of another organization's account answers as for any address, and accepting it changes nothing there", async () => {
    const globexEmail = (await getDb()).system;
    const [{ email, password_hash, org_id }] = await globexEmail.query<{ email: string; password_hash: string; org_id: string }>(
      "SELECT email, password_hash, org_id FROM users WHERE id = 'usr_globex_analyst'",
    );
    const fresh = await invite({ email: unique("fresh") });
    const taken = await invite({ email });
    expect(taken.status).toBe(fresh.status);
    expect(Object.keys(taken.json).sort()).toEqual(Object.keys(fresh.json).sort());
    expect(taken.json.delivery).toBe(fresh.json.delivery);
    const accepted = await accept(tokenOf(taken.json.link), "hijacked password 1");
    expect(accepted.status).toBe(409);
    const [after] = await globexEmail.query<{ password_hash: string; org_id: string }>("SELECT password_hash, org_id FROM users WHERE id = 'usr_globex_analyst'");
    expect(after).toEqual({ password_hash, org_id });
  });

  it("only admins of every location manage members; API keys cannot", async () => {
    expect((await call(membersRoute.GET, "GET", { token: acmeAnalyst })).status).toBe(403);
    expect((await invite({ email: unique("x") }, acmeAnalyst)).status).toBe(403);
    expect((await invite({ email: unique("x"), location_ids: ["loc_acme_nyc"] }, scopedAdmin)).status).toBe(403);
    expect((await call(membersRoute.GET, "GET", { token: scopedAdmin })).status).toBe(403);
  });

  it("refuses an address that is already a member here, and bad input with 422", async () => {
    const { system } = await getDb();
    const [{ email }] = await system.query<{ email: string }>("SELECT email FROM users WHERE id = 'usr_acme_analyst'");
    expect((await invite({ email: email.toUpperCase() })).status).toBe(409);
    expect((await invite({ email: "not an address" })).status).toBe(422);
    expect((await invite({ email: unique("r"), role: "owner" })).status).toBe(422);
    expect((await accept(tokenOf((await invite({ email: unique("weak") })).json.link), "short")).status).toBe(422);
  });
});

describe("members", () => {
  it("a role change ends the member's sessions at once; deactivation refuses sign-in and ends sessions; reactivation lets them in again", async () => {
    const { email, id } = await inviteAndAccept("analyst");
    const session = await signIn(email);
    expect((await listWith(session.browser)).status).toBe(200);
    const changed = await patch(id, { role: "general_manager", location_ids: ["loc_acme_bos"] });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json).toMatchObject({ role: "general_manager", location_ids: ["loc_acme_bos"] });
    expect((await listWith(session.browser)).status).toBe(401);

    const again = await signIn(email);
    expect(again.ok).toBe(true);
    expect((await patch(id, { status: "deactivated" })).json.status).toBe("deactivated");
    expect((await listWith(again.browser)).status).toBe(401);
    expect((await signIn(email)).ok).toBe(false);
    // A deactivated member's reset request issues nothing.
    await requestPasswordReset(email);
    const { system } = await getDb();
    expect(await system.query("SELECT 1 FROM password_resets WHERE user_id = $1", [id])).toHaveLength(0);

    expect((await patch(id, { status: "active" })).status).toBe(200);
    expect((await signIn(email)).ok).toBe(true);
  });

  it("a deactivated or deleted member's bearer tokens and the API keys they made are refused at once", async () => {
    const member = await inviteAndAccept("admin");
    const bearer = await issueLocalToken({ userId: member.id, orgSlug: "acme", role: "admin" });
    const made = await call(apiKeysRoute.POST, "POST", { token: bearer, body: { name: "leaver's key", scopes: ["dashboards:read"] } });
    expect(made.status, made.text).toBe(201);
    const listLocations = (token: string) => call(locationsRoute.GET, "GET", { token });
    expect((await listLocations(bearer)).status).toBe(200);
    expect((await listLocations(made.json.key)).status).toBe(200);

    expect((await patch(member.id, { status: "deactivated" })).status).toBe(200);
    const refusedToken = await listLocations(bearer);
    expect(refusedToken.status).toBe(401);
    expect(refusedToken.json.detail).toMatch(/no active member of organization 'acme'/);
    const refusedKey = await listLocations(made.json.key);
    expect(refusedKey.status).toBe(401);
    expect(refusedKey.text).not.toContain(made.json.key);
    // Reactivation is the admin's decision to trust the person again: their token and keys work again.
    expect((await patch(member.id, { status: "active" })).status).toBe(200);
    expect((await listLocations(bearer)).status).toBe(200);
    expect((await listLocations(made.json.key)).status).toBe(200);

    expect((await call(memberRoute.DELETE, "DELETE", { token: acme, params: { id: member.id } })).status).toBe(204);
    expect((await listLocations(bearer)).status).toBe(401);
    expect((await listLocations(made.json.key)).status).toBe(401);
    // A token naming an acme member under another organization names no member there.
    expect((await listLocations(await issueLocalToken({ userId: "usr_acme_admin", orgSlug: "globex", role: "admin" }))).status).toBe(401);
  });

  it("the last active admin cannot be demoted, deactivated or deleted, even by two admins at once", async () => {
    const { system } = await getDb();
    const admins = async () => (await system.query<{ id: string }>("SELECT id FROM users WHERE org_id = 'org_acme' AND role = 'admin' AND status = 'active'")).map((r) => r.id);
    expect(await admins()).toEqual(["usr_acme_admin"]);
    expect((await patch("usr_acme_admin", { role: "analyst" })).status).toBe(409);
    expect((await patch("usr_acme_admin", { status: "deactivated" })).status).toBe(409);
    expect((await call(memberRoute.DELETE, "DELETE", { token: acme, params: { id: "usr_acme_admin" } })).status).toBe(409);

    const second = await inviteAndAccept("admin");
    expect((await admins()).sort()).toEqual(["usr_acme_admin", second.id].sort());
    // Each admin demotes the other at the same moment: one of the two changes must be refused.
    const secondToken = await issueLocalToken({ userId: second.id, orgSlug: "acme", role: "admin" });
    const both = await Promise.all([patch(second.id, { role: "analyst" }), patch("usr_acme_admin", { role: "analyst" }, secondToken)]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(await admins()).toHaveLength(1);
    // Restore the seeded admin as the only one for the tests after this one, whichever of the two survived.
    await system.query("UPDATE users SET role = CASE WHEN id = 'usr_acme_admin' THEN 'admin' ELSE 'analyst' END WHERE id IN ('usr_acme_admin', $1)", [second.id]);
  });

  it("the last admin of every location cannot be narrowed to some locations; an admin of some locations does not count", async () => {
    const { system } = await getDb();
    // An admin of New York only cannot administer people, so they do not keep the organization's people admin.
    const scoped = await inviteAndAccept("admin", ["loc_acme_nyc"]);
    const narrowed = await patch("usr_acme_admin", { location_ids: ["loc_acme_nyc"] });
    expect(narrowed.status, narrowed.text).toBe(409);
    expect(narrowed.json.detail).toMatch(/last active admin of every location cannot be narrowed/);
    expect((await patch("usr_acme_admin", { role: "admin", location_ids: [] })).status).toBe(200);
    const [seeded] = await system.query<{ location_ids: string[] }>("SELECT location_ids FROM users WHERE id = 'usr_acme_admin'");
    expect(seeded.location_ids).toEqual([]);
    // Once the scoped admin has every location, either of the two may be narrowed, and the other one then may not.
    expect((await patch(scoped.id, { location_ids: [] })).status).toBe(200);
    expect((await patch(scoped.id, { location_ids: ["loc_acme_nyc"] })).status).toBe(200);
    expect((await patch("usr_acme_admin", { location_ids: ["loc_acme_nyc"] })).status).toBe(409);
    await system.query("UPDATE users SET role = 'analyst' WHERE id = $1", [scoped.id]);
  });

  it("deletes a member, not yourself, and not one who owns alert rules or report schedules", async () => {
    const { id } = await inviteAndAccept("analyst");
    expect((await call(memberRoute.DELETE, "DELETE", { token: acme, params: { id } })).status).toBe(204);
    expect((await call(memberRoute.DELETE, "DELETE", { token: acme, params: { id } })).status).toBe(404);
    const self = await call(memberRoute.DELETE, "DELETE", { token: acme, params: { id: "usr_acme_admin" } });
    expect(self.status).toBe(409);
    // A member whose alert rule runs in their name is deactivated, not deleted.
    const owner = await inviteAndAccept("general_manager");
    const { system } = await getDb();
    await system.query(
      `INSERT INTO notification_rules (id, org_id, key, name, base_rule_key, severity, default_channels, cadence_cron, created_by)
       VALUES ('nrl_members_test', 'org_acme', 'members-test', 'Owned', 'low_stock', 'info', '{in_app}', '0 * * * *', $1)`,
      [owner.id],
    );
    const refused = await call(memberRoute.DELETE, "DELETE", { token: acme, params: { id: owner.id } });
    expect(refused.status).toBe(409);
    expect(refused.json.detail).toMatch(/1 alert rule.*deactivate/);
    expect((await patch(owner.id, { status: "deactivated" })).status).toBe(200);
    expect(await system.query("SELECT 1 FROM notification_rules WHERE created_by = $1", [owner.id])).toHaveLength(1);
  });

  it("password reset: an admin's link sets a new password once and ends sessions; a request answers the same for any address", async () => {
    const { email, id } = await inviteAndAccept("analyst");
    const session = await signIn(email);
    const sent = await call(memberResetRoute.POST, "POST", { token: acme, params: { id } });
    expect(sent.status, sent.text).toBe(201);
    const token = tokenOf(sent.json.link);
    const done = await call(resetCompleteRoute.POST, "POST", { headers: fromNewPeer(), body: { token, password: "a brand new password" } });
    expect(done.status, done.text).toBe(204);
    expect((await call(resetCompleteRoute.POST, "POST", { headers: fromNewPeer(), body: { token, password: "yet another password" } })).status).toBe(410);
    expect((await listWith(session.browser)).status).toBe(401);
    expect((await signIn(email)).ok).toBe(false);
    expect((await signIn(email, "a brand new password")).ok).toBe(true);
    expect((await call(memberResetRoute.POST, "POST", { token: globex, params: { id } })).status).toBe(404);

    const known = await call(resetsRoute.POST, "POST", { headers: fromNewPeer(), body: { email } });
    const unknown = await call(resetsRoute.POST, "POST", { headers: fromNewPeer(), body: { email: unique("nobody") } });
    expect(known.status).toBe(202);
    expect(unknown.status).toBe(202);
    expect(known.text).toBe(unknown.text);
    await requestPasswordReset(email);
    const user = (await findUserForLogin(email))!;
    expect(await verifyPassword("a brand new password", user.passwordHash)).toBe(true);
  });
});

describe("locations", () => {
  it("create, rename, recode, archive and restore; codes unique; another organization and scoped admins refused", async () => {
    const made = await call(locationsRoute.POST, "POST", { token: acme, body: { code: "SEA", name: "Seattle", city: "Seattle", region: "West" } });
    expect(made.status, made.text).toBe(201);
    const id = made.json.id;
    expect((await call(locationsRoute.POST, "POST", { token: acme, body: { code: "SEA", name: "Again" } })).status).toBe(409);
    expect((await call(locationRoute.PATCH, "PATCH", { token: acme, params: { id }, body: { code: "NYC" } })).status).toBe(409);
    const renamed = await call(locationRoute.PATCH, "PATCH", { token: acme, params: { id }, body: { name: "Seattle Downtown", code: "SEA1" } });
    expect(renamed.json).toMatchObject({ name: "Seattle Downtown", code: "SEA1", archived_at: null });
    expect((await call(locationRoute.PATCH, "PATCH", { token: globex, params: { id }, body: { name: "Mine" } })).status).toBe(404);
    expect((await call(locationsRoute.GET, "GET", { token: globex })).text).not.toContain(id);
    expect((await call(locationRoute.PATCH, "PATCH", { token: scopedAdmin, params: { id }, body: { name: "x" } })).status).toBe(403);
    expect((await call(locationsRoute.POST, "POST", { token: acmeAnalyst, body: { code: "X", name: "x" } })).status).toBe(403);
    expect((await call(locationsRoute.POST, "POST", { token: acme, body: { code: "bad code!", name: "x" } })).status).toBe(422);

    const archived = await call(locationRoute.PATCH, "PATCH", { token: acme, params: { id }, body: { archived: true } });
    expect(archived.json.archived_at).not.toBeNull();
    expect((await call(locationsRoute.GET, "GET", { token: acme })).json.items.map((l: { id: string }) => l.id)).not.toContain(id);
    const all = await call(locationsRoute.GET, "GET", "/api/v1/locations?archived=true", { token: acme });
    expect(all.json.items.map((l: { id: string }) => l.id)).toContain(id);
    expect((await invite({ email: unique("arch"), location_ids: [id] })).status).toBe(422);
    const restored = await call(locationRoute.PATCH, "PATCH", { token: acme, params: { id }, body: { archived: false } });
    expect(restored.json.archived_at).toBeNull();
  });
});
