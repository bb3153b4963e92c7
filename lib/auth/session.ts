import "server-only";
import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { getToken } from "next-auth/jwt";
import type { NextRequest } from "next/server";
import { findOrganization, findUserForLogin } from "./directory";
import { callerAddressFromHeaders } from "@/lib/security/caller";
import { safeRedirectUrl } from "./callback-url";
import { readLocationClaim } from "./location-claim";
import { verifyAgainstDummy, verifyPassword } from "./password";
import { THROTTLED_ERROR, clearSignInFailures, recordSignInFailure, signInRetryAfter } from "./throttle";
import { Role, type Principal } from "./roles";
import { deriveKey } from "./secrets";
import { SESSION_MAX_AGE_SECONDS, isSessionRevoked, newSessionId } from "./session-revocation";

/** The session secret, derived from the application secret. */
export function sessionSecret(): string {
  return deriveKey("next-auth-session").toString("base64url");
}

interface SessionClaims {
  uid: string;
  /** This sign-in's id, kept across refreshes; signing out revokes it (session-revocation.ts). */
  sid: string;
  org: string;
  role: Role;
  /** "*" for every location (a user row with no location ids), else the user's ids. */
  locations: string[] | "*";
}

export function authOptions(): NextAuthOptions {
  return {
    secret: sessionSecret(),
    session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_SECONDS },
    pages: { signIn: "/signin" },
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
          if (!user || !ok) {
            await recordSignInFailure(subject);
            return null;
          }
          await clearSignInFailures(credentials.email);
          return { id: user.id, email: user.email, name: user.name, uid: user.id, sid: newSessionId(), org: user.org.slug, role: user.role, locations: user.locationIds.length > 0 ? user.locationIds : "*" };
        },
      }),
    ],
    callbacks: {
      // Where next-auth sends the browser after sign-in or sign-out: a page of this site only.
      redirect: ({ url, baseUrl }) => safeRedirectUrl(url, baseUrl),
      async jwt({ token, user }) {
        if (user) return Object.assign(token, { ...(user as unknown as SessionClaims), uid: user.id });
        // A refresh re-issues the cookie with a later expiry: never for a signed-out session (next-auth clears the cookie on this error).
        const sid = (token as Partial<SessionClaims>).sid;
        if (!sid || (await isSessionRevoked(sid))) throw new Error("the session was signed out");
        return token;
      },
      session({ session, token }) {
        const claims = token as unknown as SessionClaims;
        return { ...session, user: { ...session.user, id: claims.uid, org: claims.org, role: claims.role } };
      },
    },
  };
}

async function principalFromClaims(claims: Partial<SessionClaims> | null): Promise<Principal | null> {
  // Sessions from before session ids cannot be revoked, so they are refused (their users sign in again).
  if (!claims?.uid || !claims.org || typeof claims.sid !== "string") return null;
  const role = Role.safeParse(claims.role);
  const [org, revoked] = await Promise.all([findOrganization(claims.org), isSessionRevoked(claims.sid)]);
  if (revoked) return null;
  // A session is refused, like a bearer token, when its location claim is malformed (sessions from before "*" carried []).
  const locations = readLocationClaim(claims.locations);
  if (!role.success || !org || !locations.ok) return null;
  return {
    userId: claims.uid,
    orgId: org.id,
    orgSlug: org.slug,
    orgName: org.name,
    role: role.data,
    locationIds: locations.locationIds,
    via: "session",
  };
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

