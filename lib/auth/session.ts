import "server-only";
import type { NextAuthOptions } from "next-auth";
import type { Provider } from "next-auth/providers/index";
import CredentialsProvider from "next-auth/providers/credentials";
import { getToken } from "next-auth/jwt";
import type { NextRequest } from "next/server";
import { findSessionUser, findUserForLogin, type LoginUser, type SessionUser } from "./directory";
import { log } from "@/lib/log";
import { callerAddressFromHeaders } from "@/lib/security/caller";
import { safeRedirectUrl } from "./callback-url";
import { readLocationClaim } from "./location-claim";
import { verifyAgainstDummy, verifyPassword } from "./password";
import { THROTTLED_ERROR, clearSignInFailures, recordSignInFailure, signInRetryAfter } from "./throttle";
import { Role, type Principal } from "@/lib/access/roles";
import { deriveKey } from "@/lib/secrets";
import { withTenant } from "@/lib/db/tenant";
import { SESSION_MAX_AGE_SECONDS, newSessionId } from "./session-revocation";
import { SSO_REFUSED_ERROR } from "./sign-in-messages";

/** The session secret, derived from the application secret. */
export function sessionSecret(): string {
  return deriveKey("next-auth-session").toString("base64url");
}

/**
 * What a session cookie carries: who signed in, and the user record it was issued for. Each request
 * compares the record part with the user's current row (principalFromClaims); any difference ends the
 * session.
 */
export interface SessionClaims {
  uid: string;
  /** This sign-in's id, kept across refreshes; signing out revokes it (session-revocation.ts). */
  sid: string;
  /** The organization's slug. */
  org: string;
  role: Role;
  /** "*" for every location (a user row with no location ids), else the user's ids. */
  locations: string[] | "*";
  /** users.session_epoch at sign-in (migration 0024): "sign out everywhere" and any role, location or password change move it on. */
  epoch: number;
}

/**
 * What single sign-on adds to next-auth's options (lib/sso/next-auth.ts passes it on every request to next-auth's
 * routes); lib/auth knows SSO only through this shape.
 */
export interface SsoHooks {
  /** The organization's OpenID Connect provider when the request starts or ends its sign-in. */
  providers: Provider[];
  /** An OAuth callback's ID token claims (verified by openid-client) as the member's session claims, or a refusal. */
  signIn(providerId: string, idToken: Record<string, unknown>): Promise<{ ok: true; claims: SessionClaims } | { ok: false; reason: string }>;
  /** Whether a member's correct password is refused: their organization signs in through SSO only. */
  passwordRefused(user: LoginUser): Promise<boolean>;
}

/** next-auth's options, with single sign-on's providers and checks when `sso` is given. */
export function authOptions(sso?: SsoHooks): NextAuthOptions {
  return {
    secret: sessionSecret(),
    session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_SECONDS },
    // next-auth's error page is the sign-in page, which words every code itself (sign-in-messages.ts).
    pages: { signIn: "/signin", error: "/signin" },
    // next-auth's messages through our logger: an ended session refused on refresh is routine, not an error with a stack.
    logger: {
      error: (code, metadata) => {
        const message = metadata instanceof Error ? metadata.message : metadata?.error?.message;
        if (code === "JWT_SESSION_ERROR") log.info("session ended: cookie cleared", { reason: message });
        else log.error(`next-auth: ${code}`, { detail: message });
      },
      warn: (code) => log.warn(`next-auth: ${code}`),
      debug: () => {},
    },
    providers: [
      CredentialsProvider({
        name: "Email and password",
        credentials: { email: { label: "Email", type: "email" }, password: { label: "Password", type: "password" } },
        async authorize(credentials, req) {
          if (!credentials?.email || !credentials.password) return null;
          const subject = { email: credentials.email, address: callerAddressFromHeaders(new Headers(req.headers as Record<string, string>)) };
          // The gate in front of next-auth answers throttled callers with 429; this catches requests that raced past it.
          if ((await signInRetryAfter(subject)) > 0) throw new Error(THROTTLED_ERROR);
          const user = await findUserForLogin(credentials.email);
          // One scrypt either way: an unknown email takes as long as a wrong password.
          const ok = user ? await verifyPassword(credentials.password, user.passwordHash) : await verifyAgainstDummy(credentials.password);
          // An organization that signs in through SSO only refuses its members' passwords (not its break-glass
          // admins'), in the same words as a wrong password: the answer never tells where an address has an account.
          if (!user || !ok || (await sso?.passwordRefused(user))) {
            await recordSignInFailure(subject);
            return null;
          }
          await clearSignInFailures(credentials.email);
          await recordSignIn(user.org.id, user.id);
          const claims: SessionClaims = {
            uid: user.id,
            sid: newSessionId(),
            org: user.org.slug,
            role: user.role,
            locations: user.locationIds.length > 0 ? user.locationIds : "*",
            epoch: user.sessionEpoch,
          };
          return { id: user.id, email: user.email, name: user.name, ...claims };
        },
      }),
      ...(sso?.providers ?? []),
    ],
    callbacks: {
      // An SSO callback whose ID token openid-client verified: the member's session claims, or a refusal in one set of words.
      async signIn({ user, account, profile }) {
        if (account?.type !== "oauth") return true;
        if (!sso) return "/signin?error=OAuthCallback";
        // next-auth would put a thrown error's message into the redirect's query: a failure is logged and answered with a code.
        const outcome = await sso.signIn(account.provider, (profile ?? {}) as Record<string, unknown>).catch((error: unknown) => {
          log.error("sso sign-in failed", { provider: account.provider, error: error instanceof Error ? error.message : String(error) });
          return null;
        });
        if (!outcome) return "/signin?error=OAuthCallback";
        if (!outcome.ok) {
          log.info("sso sign-in refused", { provider: account.provider, reason: outcome.reason });
          return `/signin?error=${SSO_REFUSED_ERROR}`;
        }
        Object.assign(user, outcome.claims, { id: outcome.claims.uid });
        return true;
      },
      // Where next-auth sends the browser after sign-in or sign-out: a page of this site only.
      redirect: ({ url, baseUrl }) => safeRedirectUrl(url, baseUrl),
      async jwt({ token, user }) {
        if (user) return Object.assign(token, { ...(user as unknown as SessionClaims), uid: user.id });
        // A refresh (`GET /api/auth/session`) re-issues the cookie with a later expiry: never for a session
        // the request path would refuse, i.e. signed out or issued for a user record that has since
        // changed or gone (next-auth clears the cookie on this error and answers an empty session).
        if (!(await principalFromClaims(token as Partial<SessionClaims>))) throw new Error("the session was signed out, or its user was changed or deleted");
        return token;
      },
      session({ session, token }) {
        const claims = token as unknown as SessionClaims;
        return { ...session, user: { ...session.user, id: claims.uid, org: claims.org, role: claims.role } };
      },
    },
  };
}

/** The members page's "last sign-in" (migration 0044), under the user's organization's row-level security. */
async function recordSignIn(orgId: string, userId: string): Promise<void> {
  await withTenant({ orgId }, (tx) => tx.user.update({ where: { id: userId }, data: { lastSignInAt: new Date() } }));
}

/** Whether a session's location claim names the same scope as the user's current location ids (order aside). */
function sameScope(claimed: string[] | null, current: string[]): boolean {
  if (claimed === null || current.length === 0) return claimed === null && current.length === 0;
  const now = new Set(current);
  return claimed.length === now.size && claimed.every((id) => now.has(id));
}

/** The session's user as the session claims it, when that is still the user's current row; else null. */
function currentUserOf(claims: SessionClaims, locationIds: string[] | null, user: SessionUser | null): Principal | null {
  if (!user || user.signedOut) return null;
  if (user.id !== claims.uid || (claims.org !== user.org.slug && claims.org !== user.org.id)) return null;
  const role = Role.safeParse(user.role);
  if (!role.success || role.data !== claims.role) return null;
  if (!sameScope(locationIds, user.locationIds) || user.sessionEpoch !== claims.epoch) return null;
  return {
    userId: user.id,
    orgId: user.org.id,
    orgSlug: user.org.slug,
    orgName: user.org.name,
    role: role.data,
    locationIds: user.locationIds.length > 0 ? [...user.locationIds] : null,
    via: "session",
  };
}

/**
 * The principal of a session, checked against the database on every call: the session must not be
 * signed out (quarry_revoked_sessions), its user must still exist, in the same organization, with the
 * same role, the same location scope and the same session epoch as when it signed in. One query
 * (findSessionUser), on every replica alike: a role change, a location change, a deletion, "sign out
 * everywhere" or an admin ending the user's sessions takes effect on the next request.
 */
async function principalFromClaims(claims: Partial<SessionClaims> | null): Promise<Principal | null> {
  // Sessions from before session ids cannot be revoked, and those from before epochs cannot be ended
  // everywhere: both are refused (their users sign in again).
  if (!claims?.uid || !claims.org || typeof claims.sid !== "string" || !Number.isInteger(claims.epoch)) return null;
  // A session is refused, like a bearer token, when its location claim is malformed (sessions from before "*" carried []).
  const locations = readLocationClaim(claims.locations);
  if (!locations.ok) return null;
  return currentUserOf(claims as SessionClaims, locations.locationIds, await findSessionUser(claims.uid, claims.sid));
}

/** The claims of the session cookie on a request, or null when there is none or it does not verify. */
export async function sessionClaimsOf(req: NextRequest): Promise<{ sid?: unknown } | null> {
  return (await getToken({ req, secret: sessionSecret() })) as { sid?: unknown } | null;
}

/** The principal of a browser session cookie on an API request, or null. */
export async function principalFromSessionRequest(req: NextRequest): Promise<Principal | null> {
  const token = await getToken({ req, secret: sessionSecret() });
  return principalFromClaims(token as Partial<SessionClaims> | null);
}

/** The principal of the signed-in browser user in a server component, or null. */
export async function currentPagePrincipal(): Promise<Principal | null> {
  const { cookies } = await import("next/headers");
  const jar = await cookies();
  const raw = jar.get("__Secure-next-auth.session-token")?.value ?? jar.get("next-auth.session-token")?.value;
  if (!raw) return null;
  const { decode } = await import("next-auth/jwt");
  try {
    return principalFromClaims((await decode({ token: raw, secret: sessionSecret() })) as Partial<SessionClaims> | null);
  } catch {
    return null;
  }
}

