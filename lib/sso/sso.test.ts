import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import * as ssoRoute from "@/app/api/v1/sso/route";
import * as discoverRoute from "@/app/api/v1/sso/discover/route";
import { getDb } from "@/lib/db/client";
import { log } from "@/lib/log";
import { PEER_HEADER, PEER_KEY_HEADER } from "@/lib/security/client-address";
import { call, tokenFor } from "@/test/helpers";
import { NextAuthBrowser } from "@/test/support/next-auth-driver";
import { signInAtIssuer, startTestIssuer, type TestIssuer } from "@/test/support/oidc-issuer";
import { redirectUriOf } from "./settings";
import { mappedAccess } from "./sign-in";

// Loopback is reachable only through the explicit allow-list webhooks' tests use; everything else internal is refused.
process.env.NOTIFICATIONS_CONFIG = JSON.stringify({ url_allow_list: ["127.0.0.1"], in_process_worker: false });

// Public endpoints are rate-limited per address: each call comes from an address of its own, as our server stamps it.
const PEER_KEY = "sso-test-peer-key-0123456789abcdef";
(globalThis as Record<symbol, unknown>)[Symbol.for("quarry.peerKey")] = PEER_KEY;
let peer = 0;
const fromNewPeer = () => ({ [PEER_HEADER]: `198.51.100.${++peer}`, [PEER_KEY_HEADER]: PEER_KEY });

const PROVIDER = "sso-acme";
let idp: TestIssuer;
let admin: string, analyst: string, globex: string;

const settings = (over: Record<string, unknown> = {}) => ({
  issuer_url: idp.issuer,
  client_id: idp.clientId,
  client_secret: idp.clientSecret,
  domains: ["acme-sso.test", "globex.test"],
  role_claim: "groups",
  role_mappings: [
    { value: "quarry-admins", role: "admin" },
    { value: "nyc-managers", role: "general_manager", location_ids: ["loc_acme_nyc"] },
    { value: "nyc-admins", role: "admin", location_ids: ["loc_acme_nyc"] },
  ],
  default_role: "analyst",
  ...over,
});
const save = (body: unknown, token: string = admin) => call(ssoRoute.PUT, "PUT", { token, body });

/** One SSO round trip in a browser of next-auth's routes: start, sign in at the provider as `login`, come back. */
async function startSignIn(browser = new NextAuthBrowser()) {
  const { csrfToken } = (await browser.call("GET", ["csrf"])).body as { csrfToken: string };
  const started = await browser.call("POST", ["signin", PROVIDER], { csrfToken, callbackUrl: "/", json: "true" });
  const authorizationUrl = (started.body as { url?: string } | undefined)?.url ?? started.location;
  expect(authorizationUrl, JSON.stringify(started)).toMatch(new RegExp(`^${idp.issuer}/auth\\?`));
  const params = new URL(authorizationUrl!).searchParams;
  expect(params.get("code_challenge_method")).toBe("S256");
  expect(params.get("state")).toBeTruthy();
  expect(params.get("nonce")).toBeTruthy();
  return { browser, authorizationUrl: authorizationUrl! };
}

async function finish(browser: NextAuthBrowser, callback: URL) {
  const answer = await browser.call("GET", ["callback", PROVIDER], {}, Object.fromEntries(callback.searchParams));
  const session = (await browser.session()).body as { user?: { id: string; role: string } } | undefined;
  return { location: answer.location ?? (answer.body as { url?: string } | undefined)?.url ?? null, user: session?.user ?? null };
}

async function signInAs(login: string) {
  const { browser, authorizationUrl } = await startSignIn();
  return { browser, ...(await finish(browser, await signInAtIssuer(authorizationUrl, idp.issuer, login))) };
}

/** What next-auth logged for the last refused callback: the check that refused it (openid-client's words). */
const errors = vi.spyOn(log, "error");
function lastCallbackError(): string {
  const call = errors.mock.calls.findLast(([message]) => message.startsWith("next-auth: OAUTH_CALLBACK"));
  errors.mockClear();
  return JSON.stringify(call ?? null);
}

const userByEmail = async (email: string) =>
  (await (await getDb()).system.query<{ id: string; org_id: string; role: string; location_ids: string[] }>("SELECT id, org_id, role, location_ids FROM users WHERE email = $1", [email]))[0];

beforeAll(async () => {
  [admin, analyst, globex] = await Promise.all([tokenFor("acme", "admin"), tokenFor("acme", "analyst"), tokenFor("globex", "admin")]);
  const browser = new NextAuthBrowser();
  idp = await startTestIssuer({ redirectUris: [...new Set([redirectUriOf("acme"), `${browser.origin}/api/auth/callback/${PROVIDER}`])] });
  idp.accounts.set("alice", { email: "alice@acme-sso.test", email_verified: true, name: "Alice", groups: ["quarry-admins", "staff"] });
  idp.accounts.set("bob", { email: "bob@acme-sso.test", email_verified: true, name: "Bob", groups: ["nyc-managers"] });
  idp.accounts.set("mallory", { email: "mallory@elsewhere.test", email_verified: true, groups: ["quarry-admins"] });
  idp.accounts.set("globex-admin", { email: "admin@globex.test", email_verified: true, groups: ["quarry-admins"] });
  idp.accounts.set("unverified", { email: "eve@acme-sso.test", email_verified: false, groups: ["quarry-admins"] });
}, 60_000);
afterAll(async () => idp?.close());

describe("the claim's mapping (mappedAccess)", () => {
  const sso = {
    defaultRole: null,
    roleMappings: [
      { value: "admins", role: "admin" as const, location_ids: [] },
      { value: "nyc", role: "general_manager" as const, location_ids: ["loc_nyc"] },
      { value: "sfo", role: "general_manager" as const, location_ids: ["loc_sfo"] },
      { value: "readers", role: "analyst" as const, location_ids: [] },
    ],
  };
  it("grants the highest matching role with the union of that role's locations, and nothing else", () => {
    expect(mappedAccess(sso, ["sfo", "readers", "nyc"])).toEqual({ role: "general_manager", locationIds: ["loc_nyc", "loc_sfo"] });
    expect(mappedAccess(sso, ["nyc", "admins"])).toEqual({ role: "admin", locationIds: [] });
    expect(mappedAccess(sso, "readers")).toEqual({ role: "analyst", locationIds: [] });
    // A lower role's wider scope never widens the higher role's.
    expect(mappedAccess(sso, ["nyc", "readers"])).toEqual({ role: "general_manager", locationIds: ["loc_nyc"] });
    for (const claim of [undefined, null, [], ["Admins"], [1, { value: "admins" }], "admins,nyc"]) expect(mappedAccess(sso, claim)).toBeNull();
    expect(mappedAccess({ ...sso, defaultRole: "analyst" }, ["unknown"])).toEqual({ role: "analyst", locationIds: [] });
  });
});

describe("SSO settings (/api/v1/sso)", () => {
  it("saves through the outbound rules, never answers the secret, and refuses what the organization does not hold", async () => {
    expect((await call(ssoRoute.GET, "GET", { token: admin })).status).toBe(404);
    expect((await save(settings(), analyst)).status).toBe(403);

    // The outbound rules webhooks keep: an internal address is refused, and so is plain http off the allow-list.
    const internal = await save(settings({ issuer_url: "https://169.254.169.254/latest" }));
    expect(internal.status).toBe(422);
    expect(JSON.stringify(internal.json.detail)).toMatch(/private or reserved address/);
    const plain = await save(settings({ issuer_url: "http://login.example.com" }));
    expect(JSON.stringify(plain.json.detail)).toMatch(/must use https/);
    const foreignLocation = await save(settings({ role_mappings: [{ value: "x", role: "general_manager", location_ids: ["loc_globex_lon"] }] }));
    expect(foreignLocation.status).toBe(422);
    expect(JSON.stringify(foreignLocation.json.detail)).toMatch(/Not locations of your organization/);
    const noBreakGlass = await save(settings({ sso_only: true }));
    expect(noBreakGlass.status).toBe(422);
    const notAnAdmin = await save(settings({ sso_only: true, break_glass_user_ids: ["usr_acme_analyst"] }));
    expect(notAnAdmin.status).toBe(422);
    expect((await call(ssoRoute.GET, "GET", { token: admin })).status).toBe(404);

    const saved = await save(settings());
    expect(saved.status, JSON.stringify(saved.json)).toBe(200);
    expect(saved.json).toMatchObject({ issuer_url: idp.issuer, client_secret_set: true, provider_id: PROVIDER, domains: ["acme-sso.test", "globex.test"] });
    const read = await call(ssoRoute.GET, "GET", { token: admin });
    expect(read.text).not.toContain(idp.clientSecret);
    const { system } = await getDb();
    const [row] = await system.query<{ client_secret_enc: string }>("SELECT client_secret_enc FROM sso_settings WHERE org_id = 'org_acme'");
    expect(row.client_secret_enc).not.toContain(idp.clientSecret);

    // Saved again without a secret: the stored one is kept.
    const { client_secret: _secret, ...withoutSecret } = settings();
    expect((await save(withoutSecret)).status).toBe(200);
    // Each save is in the audit log with before and after, and the secret in neither.
    const audit = await system.query<{ actor_id: string; before: unknown; after: { issuer_url: string } }>(
      "SELECT actor_id, before, after FROM audit_events WHERE org_id = 'org_acme' AND action = 'sso.update' ORDER BY occurred_at, id",
    );
    expect(audit.map((a) => [a.actor_id, a.before === null, a.after.issuer_url])).toEqual([
      ["usr_acme_admin", true, idp.issuer],
      ["usr_acme_admin", false, idp.issuer],
    ]);
    expect(JSON.stringify(audit)).not.toContain(idp.clientSecret);

    // Another organization cannot take a domain acme holds, and sees nothing of acme's settings.
    const taken = await save(settings({ domains: ["acme-sso.test"] }), globex);
    expect(taken.status).toBe(422);
    expect(JSON.stringify(taken.json.detail)).toMatch(/Already used for single sign-on/);
    expect((await call(ssoRoute.GET, "GET", { token: globex })).status).toBe(404);
  });

  it("discovery names the provider by domain or slug, with one answer for everything else", async () => {
    const discover = (value: string) => call(discoverRoute.POST, "POST", { body: { email_or_organization: value }, headers: fromNewPeer() });
    expect((await discover("someone@ACME-SSO.test")).json).toEqual({ provider_id: PROVIDER, organization_name: expect.any(String) });
    expect((await discover("acme")).json.provider_id).toBe(PROVIDER);
    const unknownDomain = await discover("admin@nowhere.test");
    const noSso = await discover("globex");
    expect([unknownDomain.status, noSso.status]).toEqual([404, 404]);
    expect(unknownDomain.json.detail).toBe(noSso.json.detail);
  });
});

describe("SSO sign-in through next-auth against a real OpenID provider", () => {
  it("makes the account just in time with the role its group maps to", async () => {
    const alice = await signInAs("alice");
    expect(alice.location).toBe("http://localhost:3000/");
    expect(alice.user).toMatchObject({ role: "admin" });
    expect(await userByEmail("alice@acme-sso.test")).toMatchObject({ org_id: "org_acme", role: "admin", location_ids: [] });

    const bob = await signInAs("bob");
    expect(bob.user).toMatchObject({ role: "general_manager" });
    expect((await userByEmail("bob@acme-sso.test")).location_ids).toEqual(["loc_acme_nyc"]);
  });

  it("two first sign-ins of one address at once make one member and both sign in", async () => {
    idp.accounts.set("dave", { email: "dave@acme-sso.test", email_verified: true, groups: ["staff"] });
    const flows = await Promise.all([startSignIn(), startSignIn()]);
    const callbacks = await Promise.all(flows.map((f) => signInAtIssuer(f.authorizationUrl, idp.issuer, "dave")));
    const both = await Promise.all(flows.map((f, i) => finish(f.browser, callbacks[i])));
    expect(both.map((b) => b.user?.role)).toEqual(["analyst", "analyst"]);
    expect(await (await getDb()).system.query("SELECT id FROM users WHERE email = 'dave@acme-sso.test'")).toHaveLength(1);
  });

  it("a claim cannot demote the organization's last active admin of every location, nor narrow their locations; once another exists it does", async () => {
    expect((await signInAs("alice")).user).toMatchObject({ role: "admin" });
    const { system } = await getDb();
    const alice = await userByEmail("alice@acme-sso.test");
    // Alice is made the last active admin: the seeded one is set aside for this test.
    await system.query("UPDATE users SET status = 'deactivated' WHERE id = 'usr_acme_admin'");
    try {
      idp.accounts.set("alice", { ...idp.accounts.get("alice")!, groups: ["nyc-managers"] });
      const kept = await signInAs("alice");
      expect(kept.user).toMatchObject({ role: "admin" });
      expect(await userByEmail("alice@acme-sso.test")).toMatchObject({ role: "admin", location_ids: alice.location_ids });
      // Nor narrow them to some locations: an admin of New York only could no longer administer people.
      idp.accounts.set("alice", { ...idp.accounts.get("alice")!, groups: ["nyc-admins"] });
      expect((await signInAs("alice")).user).toMatchObject({ role: "admin" });
      expect(await userByEmail("alice@acme-sso.test")).toMatchObject({ role: "admin", location_ids: [] });
      idp.accounts.set("alice", { ...idp.accounts.get("alice")!, groups: ["nyc-managers"] });
    } finally {
      await system.query("UPDATE users SET status = 'active' WHERE id = 'usr_acme_admin'");
    }
    expect((await signInAs("alice")).user).toMatchObject({ role: "general_manager" });
    idp.accounts.set("alice", { ...idp.accounts.get("alice")!, groups: ["quarry-admins", "staff"] });
  });

  it("a group removed at the provider lowers the role at the next sign-in, and the earlier session ends", async () => {
    const first = await signInAs("alice");
    expect(first.user).toMatchObject({ role: "admin" });
    idp.accounts.set("alice", { ...idp.accounts.get("alice")!, groups: ["staff"] });
    const second = await signInAs("alice");
    expect(second.user).toMatchObject({ role: "analyst" });
    expect((await userByEmail("alice@acme-sso.test")).role).toBe("analyst");
    expect(((await first.browser.session()).body as { user?: unknown } | undefined)?.user).toBeUndefined();
  });

  it("refuses an ID token for another audience or from another issuer", async () => {
    const cases = [
      { override: { aud: "another-client" }, check: /aud mismatch/ },
      { override: { iss: "http://127.0.0.1:1" }, check: /unexpected iss value/ },
    ];
    for (const { override, check } of cases) {
      idp.idTokenOverride = override;
      try {
        const refused = await signInAs("bob");
        expect(refused.user, JSON.stringify(override)).toBeNull();
        expect(refused.location).toMatch(/error=OAuthCallback/);
        expect(lastCallbackError()).toMatch(check);
      } finally {
        idp.idTokenOverride = null;
      }
    }
  });

  it("refuses a replayed code, a tampered state and a nonce of another sign-in", async () => {
    // Replay: the same callback with the same cookies a second time; the provider refuses a spent code.
    const { browser, authorizationUrl } = await startSignIn();
    const callback = await signInAtIssuer(authorizationUrl, idp.issuer, "bob");
    const cookies = new Map(browser.cookies);
    expect((await finish(browser, callback)).user).toMatchObject({ role: "general_manager" });
    const replayer = new NextAuthBrowser();
    for (const [name, value] of cookies) replayer.cookies.set(name, value);
    const replayed = await finish(replayer, callback);
    expect(replayed.user).toBeNull();
    expect(replayed.location).toMatch(/error=OAuthCallback/);
    expect(lastCallbackError()).toMatch(/invalid_grant/);

    // State: the provider's answer with another state than the browser's cookie holds.
    const tampered = await startSignIn();
    const back = await signInAtIssuer(tampered.authorizationUrl, idp.issuer, "bob");
    back.searchParams.set("state", `${back.searchParams.get("state")}x`);
    expect((await finish(tampered.browser, back)).user).toBeNull();
    expect(lastCallbackError()).toMatch(/state/);

    // Nonce: the code of sign-in A delivered with the nonce cookie of sign-in B (state and verifier A's own).
    const a = await startSignIn();
    const b = await startSignIn();
    const backA = await signInAtIssuer(a.authorizationUrl, idp.issuer, "bob");
    const nonceCookie = [...b.browser.cookies.keys()].find((name) => name.includes("nonce"))!;
    expect(nonceCookie).toBeTruthy();
    a.browser.cookies.set(nonceCookie, b.browser.cookies.get(nonceCookie)!);
    const mixed = await finish(a.browser, backA);
    expect(mixed.user).toBeNull();
    expect(mixed.location).toMatch(/error=OAuthCallback/);
    expect(lastCallbackError()).toMatch(/nonce mismatch/);
  });

  it("refuses an address outside the verified domains, one held by another organization and an unverified one, in the same words", async () => {
    const before = await (await getDb()).system.query("SELECT id FROM users");
    const outside = await signInAs("mallory");
    const elsewhere = await signInAs("globex-admin");
    const unverified = await signInAs("unverified");
    for (const refused of [outside, elsewhere, unverified]) {
      expect(refused.user).toBeNull();
      expect(refused.location).toBe("/signin?error=SsoRefused");
    }
    expect(await (await getDb()).system.query("SELECT id FROM users")).toHaveLength(before.length);
    expect((await userByEmail("admin@globex.test")).org_id).toBe("org_globex");
  });

  it("SSO only refuses a member's password but keeps the break-glass admin's", async () => {
    const { client_secret: _secret, ...kept } = settings();
    expect((await save({ ...kept, sso_only: true, break_glass_user_ids: ["usr_acme_admin"] })).status).toBe(200);
    const analyst = new NextAuthBrowser();
    await analyst.signIn("analyst@acme.test", "quarry-demo");
    expect(analyst.sessionToken()).toBeUndefined();
    const breakGlass = new NextAuthBrowser();
    await breakGlass.signIn("admin@acme.test", "quarry-demo");
    expect(breakGlass.sessionToken()).toBeTruthy();
    // Another organization's passwords are untouched.
    const otherOrganization = new NextAuthBrowser();
    await otherOrganization.signIn("analyst@globex.test", "quarry-demo");
    expect(otherOrganization.sessionToken()).toBeTruthy();
    // SSO itself still signs the analyst's colleagues in.
    expect((await signInAs("bob")).user).toMatchObject({ role: "general_manager" });
  });
});
