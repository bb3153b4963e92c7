import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GET as listLocations } from "@/app/api/v1/locations/route";
import { configSingleton } from "@/lib/config";
import { call, tokenFor } from "@/test/helpers";
import { jwksSingleton } from "./bearer";

/**
 * The production path of SPEC §5: tokens from an external identity provider, verified against
 * its JWKS (served here by a loopback HTTP server) with the configured issuer, audience and
 * claim names. The embedded local issuer is not trusted once a JWKS URL is configured.
 */
const ISSUER = "https://idp.example.test/";
const AUDIENCE = "quarry-production";
let server: http.Server;
let idpKey: CryptoKey;
let strangerKey: CryptoKey;
let localToken: string;

beforeAll(async () => {
  // Issued before the switch, while the local issuer is still the trusted one.
  localToken = await tokenFor("acme", "admin");
  const pair = await generateKeyPair("RS256");
  idpKey = pair.privateKey;
  strangerKey = (await generateKeyPair("RS256")).privateKey;
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: "idp-1", alg: "RS256", use: "sig" }] });
  server = http.createServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(jwks));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  Object.assign(process.env, {
    AUTH_JWKS_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`,
    AUTH_ISSUER: ISSUER,
    AUTH_AUDIENCE: AUDIENCE,
    AUTH_CLAIM_ORG: "https://quarry.example/org",
    AUTH_CLAIM_ROLE: "https://quarry.example/role",
    AUTH_CLAIM_LOCATIONS: "https://quarry.example/locations",
    AUTH_CLAIM_EMAIL: "https://quarry.example/email",
  });
  configSingleton.set(undefined);
  jwksSingleton.set(undefined);
});

afterAll(async () => {
  for (const name of ["AUTH_JWKS_URL", "AUTH_ISSUER", "AUTH_AUDIENCE", "AUTH_CLAIM_ORG", "AUTH_CLAIM_ROLE", "AUTH_CLAIM_LOCATIONS", "AUTH_CLAIM_EMAIL"]) delete process.env[name];
  configSingleton.set(undefined);
  jwksSingleton.set(undefined);
  await new Promise((resolve) => server.close(resolve));
});

function idpToken(claims: JWTPayload, options: { key?: CryptoKey; kid?: string; issuer?: string; audience?: string; expiresIn?: string } = {}) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "RS256", kid: options.kid ?? "idp-1" })
    .setIssuer(options.issuer ?? ISSUER)
    .setAudience(options.audience ?? AUDIENCE)
    .setSubject("auth0|manager-7")
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? "10m")
    .sign(options.key ?? idpKey);
}

// The provider's subject is its own id: the member is named by the configured e-mail claim.
const acmeManager = { "https://quarry.example/org": "acme", "https://quarry.example/role": "general_manager", "https://quarry.example/email": "GM@acme.test" };

describe("bearer tokens from a configured identity provider", () => {
  it("maps the configured claim names to the principal, location scope included", async () => {
    const token = await idpToken({ ...acmeManager, "https://quarry.example/locations": ["loc_acme_nyc", "loc_acme_chi"] });
    const res = await call(listLocations, "GET", "/api/v1/locations", { token });
    expect(res.status).toBe(200);
    expect(res.json.items.map((l: { id: string }) => l.id).sort()).toEqual(["loc_acme_chi", "loc_acme_nyc"]);
    const globex = await idpToken({ "https://quarry.example/org": "globex", "https://quarry.example/role": "analyst", "https://quarry.example/email": "analyst@globex.test" });
    const theirs = await call(listLocations, "GET", "/api/v1/locations", { token: globex });
    expect(theirs.json.items.every((l: { id: string }) => l.id.startsWith("loc_globex_"))).toBe(true);
  });

  it.each([
    ["the local issuer's token", () => Promise.resolve(localToken), /not signed by a trusted issuer|not allowed|signature/],
    ["another key under the provider's kid", () => idpToken(acmeManager, { key: strangerKey }), /signature is invalid/],
    ["an unknown kid", () => idpToken(acmeManager, { kid: "idp-2" }), /not signed by a trusted issuer/],
    ["another issuer", () => idpToken(acmeManager, { issuer: "https://evil.example/" }), /claim 'iss' is invalid/],
    ["another audience", () => idpToken(acmeManager, { audience: "someone-else" }), /claim 'aud' is invalid/],
    ["an expired token", () => idpToken(acmeManager, { expiresIn: "-1m" }), /expired/],
    ["the default claim names", () => idpToken({ org: "acme", role: "admin" }), /no 'https:\/\/quarry.example\/org' claim/],
    ["no e-mail claim (the subject is no member's id)", () => idpToken({ "https://quarry.example/org": "acme", "https://quarry.example/role": "admin" }), /no active member of organization 'acme'/],
    ["an e-mail of no member", () => idpToken({ ...acmeManager, "https://quarry.example/email": "stranger@acme.test" }), /no active member/],
    ["an e-mail of another organization's member", () => idpToken({ ...acmeManager, "https://quarry.example/email": "gm@globex.test" }), /no active member/],
  ])("answers 401 to %s", async (_name, makeToken, detail) => {
    const res = await call(listLocations, "GET", "/api/v1/locations", { token: await makeToken() });
    expect(res.status).toBe(401);
    expect(res.json.detail).toMatch(detail);
  });

  it("answers 403 to a role outside Quarry's", async () => {
    const res = await call(listLocations, "GET", "/api/v1/locations", { token: await idpToken({ ...acmeManager, "https://quarry.example/role": "owner" }) });
    expect(res.status).toBe(403);
  });

  it.each([
    ["absent", undefined],
    ['"*"', "*"],
    ['["*"]', ["*"]],
  ])("a locations claim %s means every location", async (_name, locations) => {
    const token = await idpToken({ ...acmeManager, ...(locations === undefined ? {} : { "https://quarry.example/locations": locations }) });
    const res = await call(listLocations, "GET", "/api/v1/locations", { token });
    expect(res.status).toBe(200);
    expect(res.json.items).toHaveLength(5);
  });

  it.each([
    ["[]", []],
    ["null", null],
    ["a string other than *", "loc_acme_nyc"],
    ["a number", 7],
    ["an object", { ids: ["loc_acme_nyc"] }],
    ["non-string items", [1, 2]],
    ['"*" beside ids', ["*", "loc_acme_nyc"]],
    ["an empty id", [""]],
  ])("refuses a malformed locations claim (%s) with 401 instead of granting every location", async (_name, locations) => {
    const res = await call(listLocations, "GET", "/api/v1/locations", { token: await idpToken({ ...acmeManager, "https://quarry.example/locations": locations }) });
    expect(res.status).toBe(401);
    expect(res.json.detail).toMatch(/claim 'https:\/\/quarry.example\/locations' (must|is an empty list|is null)/);
  });
});
