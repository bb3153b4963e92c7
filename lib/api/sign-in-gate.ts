import "server-only";
import { NextRequest, NextResponse } from "next/server";
import { withAuditRequest } from "@/lib/audit/context";
import { recordSignOut } from "@/lib/auth/end-sessions";
import { principalFromSessionRequest, sessionClaimsOf } from "@/lib/auth/session";
import { revokeSession } from "@/lib/auth/session-revocation";
import { THROTTLED_ERROR, signInRetryAfter } from "@/lib/auth/throttle";
import { DomainError } from "@/lib/errors";
import { log } from "@/lib/log";
import { callerAddress } from "@/lib/security/caller";
import { domainErrorResponse } from "./errors";
import { assertSameOrigin } from "./same-origin";

/**
 * Runs in front of next-auth's own routes: every POST must come from this site
 * (next-auth's CSRF token guards its forms; the Origin check makes it two
 * guards, as for the API), a sign-out revokes its session in the database before
 * next-auth clears the cookie (so a copy of the cookie is refused by every replica
 * at once), and a credentials sign-in of a throttled account or address is
 * answered 429 with Retry-After before any password is hashed.
 */
export async function signInGate(req: Request, segments: string[]): Promise<Response | null> {
  if (req.method !== "POST") return null;
  try {
    assertSameOrigin(req);
  } catch (error) {
    if (error instanceof DomainError) return domainErrorResponse(error);
    throw error;
  }
  if (segments.join("/") === "signout") return revokeSignedOutSession(req);
  if (segments.join("/") !== "callback/credentials") return null;
  const form = await req.clone().formData().catch(() => null);
  const email = form?.get("email");
  const retryAfter = await signInRetryAfter({ email: typeof email === "string" ? email : "", address: callerAddress(req) });
  if (retryAfter === 0) return null;
  return NextResponse.json(
    { detail: `Too many failed sign-ins; try again in ${retryAfter} s`, error: THROTTLED_ERROR, retry_after: retryAfter },
    { status: 429, headers: { "Retry-After": String(retryAfter) } },
  );
}

/** Records the sign-out of the request's session, if it has one; a sign-out that cannot be recorded is refused, not half done. */
async function revokeSignedOutSession(req: Request): Promise<Response | null> {
  // Only the cookies are read: a request built from `req` itself would take its body from next-auth.
  const cookies = new NextRequest(req.url, { headers: req.headers });
  const claims = await sessionClaimsOf(cookies);
  if (typeof claims?.sid !== "string") return null;
  // Who signs out, read before the revocation; a session already ended has no one to audit.
  const principal = await principalFromSessionRequest(cookies);
  try {
    await revokeSession(claims.sid);
  } catch (error) {
    log.error("sign-out could not be recorded", { error: error instanceof Error ? error.message : String(error) });
    return NextResponse.json({ detail: "Signing out failed: the sign-out could not be recorded. Try again." }, { status: 503 });
  }
  if (principal) {
    await withAuditRequest({ address: callerAddress(req) }, () => recordSignOut(principal)).catch((error: unknown) =>
      log.error("sign-out audit row could not be written", { user: principal.userId, error: error instanceof Error ? error.message : String(error) }),
    );
  }
  return null;
}
