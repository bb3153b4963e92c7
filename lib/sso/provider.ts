import "server-only";
import type { OAuthConfig } from "next-auth/providers/oauth";
import { findOrganization } from "@/lib/auth/directory";
import { assertSafeUrl } from "@/lib/notifications/transports/url-guard";
import { outboundLookup, readIssuer } from "./issuer";
import { loadSsoConfig, providerIdOf, slugOfProviderId } from "./settings";

/** The claims Quarry reads from an ID token; the role claim is read by name from the rest. */
export interface IdTokenClaims extends Record<string, unknown> {
  sub: string;
  email?: unknown;
  email_verified?: unknown;
  name?: unknown;
}

const OUTBOUND_TIMEOUT_MS = 10_000;

/**
 * next-auth's OpenID Connect provider for an organization's SSO, or null when the id names none (or it is
 * turned off). Built per request from the organization's settings: the endpoints come from the issuer's
 * discovery document (read through the outbound rules, its issuer checked), and the server-side ones are
 * checked too, since openid-client calls them itself. openid-client then checks, in the callback, the
 * state, the PKCE verifier, the ID token's signature (JWKS), issuer, audience (the client id), expiry and
 * nonce; next-auth keeps state, verifier and nonce in encrypted, short-lived cookies.
 */
export async function ssoProvider(providerId: string): Promise<OAuthConfig<IdTokenClaims> | null> {
  const slug = slugOfProviderId(providerId);
  if (!slug) return null;
  const org = await findOrganization(slug);
  if (!org || org.slug !== slug) return null;
  const sso = await loadSsoConfig(org.id);
  if (!sso?.enabled) return null;
  const issuer = await readIssuer(sso.issuerUrl);
  for (const url of [issuer.token_endpoint, issuer.jwks_uri]) await assertSafeUrl(url);
  return {
    id: providerIdOf(slug),
    name: org.name,
    type: "oauth",
    idToken: true,
    checks: ["pkce", "state", "nonce"],
    issuer: issuer.issuer,
    authorization: { url: issuer.authorization_endpoint, params: { scope: "openid email profile" } },
    token: { url: issuer.token_endpoint },
    userinfo: issuer.userinfo_endpoint ? { url: issuer.userinfo_endpoint } : undefined,
    jwks_endpoint: issuer.jwks_uri,
    clientId: sso.clientId,
    clientSecret: sso.clientSecret,
    client: { token_endpoint_auth_method: "client_secret_basic" },
    httpOptions: { timeout: OUTBOUND_TIMEOUT_MS, lookup: outboundLookup } as OAuthConfig<IdTokenClaims>["httpOptions"],
    // The session's claims are decided after the callback (lib/sso/sign-in.ts); this only names the subject.
    profile: (claims) => ({ id: claims.sub, email: typeof claims.email === "string" ? claims.email : null, name: typeof claims.name === "string" ? claims.name : null }),
  };
}
