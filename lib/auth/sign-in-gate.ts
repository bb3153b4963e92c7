import "server-only";
import { NextResponse } from "next/server";
import { callerAddress } from "@/lib/api/caller";
import { domainErrorResponse } from "@/lib/api/errors";
import { assertSameOrigin } from "@/lib/api/same-origin";
import { DomainError } from "@/lib/errors";
import { THROTTLED_ERROR, signInRetryAfter } from "./throttle";

/**
 * Runs in front of next-auth's own routes: every POST must come from this site
 * (next-auth's CSRF token guards its forms; the Origin check makes it two
 * guards, as for the API), and a credentials sign-in of a throttled account or
 * address is answered 429 with Retry-After before any password is hashed.
 */
export async function signInGate(req: Request, segments: string[]): Promise<Response | null> {
  if (req.method !== "POST") return null;
  try {
    assertSameOrigin(req);
  } catch (error) {
    if (error instanceof DomainError) return domainErrorResponse(error);
    throw error;
  }
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
