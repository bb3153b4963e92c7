import crypto from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { SignJWT, decodeJwt, importJWK, type JWK } from "jose";
import Provider, { type Configuration } from "oidc-provider";

/**
 * A real OpenID Connect provider (the `oidc-provider` package, certified by the OpenID Foundation) on
 * 127.0.0.1 for the SSO tests: authorization code flow with PKCE required, its own sign-in form
 * (devInteractions: any password, the login is the account id), consent granted up front. `idTokenOverride`
 * makes the token endpoint answer an ID token re-signed with the provider's own key but other claims (another
 * audience or issuer): what a provider misconfigured or a token meant for another client looks like.
 */
export interface TestAccount {
  email: string;
  email_verified?: boolean;
  name?: string;
  groups?: string[];
}

export interface TestIssuer {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, TestAccount>;
  idTokenOverride: Record<string, unknown> | null;
  close(): Promise<void>;
}

export async function startTestIssuer(options: { redirectUris: string[]; clientId?: string; clientSecret?: string }): Promise<TestIssuer> {
  const clientId = options.clientId ?? "quarry";
  const clientSecret = options.clientSecret ?? crypto.randomBytes(24).toString("base64url");
  const accounts = new Map<string, TestAccount>();
  let handler: http.RequestListener = (_req, res) => res.writeHead(503).end();
  const server = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { privateKey } = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
  const jwk = { ...(privateKey.export({ format: "jwk" }) as JWK), kid: "test-key", alg: "RS256", use: "sig" };
  const signingKey = await importJWK(jwk, "RS256");

  const configuration: Configuration = {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: options.redirectUris, grant_types: ["authorization_code"], response_types: ["code"] }],
    jwks: { keys: [jwk] },
    cookies: { keys: [crypto.randomBytes(16).toString("hex")] },
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name", "groups"] },
    // The claims of the scopes asked for go into the ID token itself (what next-auth's idToken mode reads).
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true } },
    findAccount: (_ctx, id) => {
      const account = accounts.get(id);
      if (!account) return undefined;
      return { accountId: id, claims: () => ({ sub: id, ...account }) };
    },
    // Consent is the provider admin's business, not the test's: every scope asked for is granted.
    loadExistingGrant: async (ctx) => {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId! });
      grant.addOIDCScope("openid email profile");
      await grant.save();
      return grant;
    },
  };
  const provider = new Provider(issuer, configuration);
  const testIssuer: TestIssuer = {
    issuer,
    clientId,
    clientSecret,
    accounts,
    idTokenOverride: null,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { id_token?: string } | undefined;
    if (ctx.path === "/token" && testIssuer.idTokenOverride && body?.id_token) {
      const claims = { ...decodeJwt(body.id_token), ...testIssuer.idTokenOverride };
      body.id_token = await new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "test-key", typ: "JWT" }).sign(signingKey);
    }
  });
  handler = provider.callback();
  return testIssuer;
}

/**
 * A user agent at the provider: follows its redirects with its own cookies, signs in on its form as
 * `login`, and answers the redirect back to the client (the callback URL with code, state and iss).
 */
export async function signInAtIssuer(authorizationUrl: string, issuer: string, login: string): Promise<URL> {
  const cookies = new Map<string, string>();
  const send = async (url: string, init: { method?: string; body?: URLSearchParams } = {}) => {
    const res = await fetch(url, {
      method: init.method ?? "GET",
      body: init.body,
      redirect: "manual",
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; ") },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const eq = pair.indexOf("=");
      cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
    return res;
  };
  let url = authorizationUrl;
  for (let hop = 0; hop < 10; hop++) {
    if (!url.startsWith(issuer)) return new URL(url);
    const res = await send(url);
    const location = res.headers.get("location");
    if (location) {
      url = new URL(location, url).toString();
      continue;
    }
    const page = await res.text();
    if (!/name="prompt" value="login"/.test(page)) throw new Error(`the provider answered ${res.status} without a sign-in form: ${page.slice(0, 300)}`);
    const submitted = await send(url, { method: "POST", body: new URLSearchParams({ prompt: "login", login, password: "any" }) });
    const next = submitted.headers.get("location");
    if (!next) throw new Error(`the provider's sign-in answered ${submitted.status} without a redirect`);
    url = new URL(next, url).toString();
  }
  throw new Error("too many redirects at the provider");
}
