import "server-only";
import { withTenant } from "@/lib/db/tenant";
import { notFound } from "@/lib/errors";
import type { Principal } from "@/lib/access/roles";

/**
 * Ends every browser session of a user at once, on every replica: the user's session epoch moves on
 * (migration 0024), and each request compares its session's epoch with the current one
 * (lib/auth/session.ts). Cookies are stateless, so there is no list of sessions to walk. Runs as the
 * caller's organization under row-level security: a user of another organization is not found.
 * Answers how many users were changed (0 or 1).
 */
async function moveSessionEpoch(principal: Principal, userId: string): Promise<number> {
  const { count } = await withTenant(principal, (tx) => tx.user.updateMany({ where: { id: userId }, data: { sessionEpoch: { increment: 1 } } }));
  return count;
}

/** "Sign out everywhere": every browser session of the caller ends, this one included. A caller without a user record (a token of the identity provider) has none; that is not an error. */
export async function endOwnSessions(principal: Principal): Promise<void> {
  await moveSessionEpoch(principal, principal.userId);
}

/** An admin ends another user's browser sessions, for a user of the admin's own organization only (404 otherwise, as for a user that does not exist). */
export async function endUserSessions(principal: Principal, userId: string): Promise<void> {
  if ((await moveSessionEpoch(principal, userId)) === 0) throw notFound("User");
}
