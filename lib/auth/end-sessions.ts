import "server-only";
import { withTenant } from "@/lib/db/tenant";
import { notFound } from "@/lib/errors";
import { recordAudit } from "@/lib/audit/record";
import type { Principal } from "@/lib/access/roles";

/**
 * Ends every browser session of a user at once, on every replica: the user's session epoch moves on
 * (migration 0024), and each request compares its session's epoch with the current one
 * (lib/auth/session.ts). Cookies are stateless, so there is no list of sessions to walk. Runs as the
 * caller's organization under row-level security: a user of another organization is not found.
 * Answers how many users were changed (0 or 1).
 */
async function moveSessionEpoch(principal: Principal, userId: string, reason: "sign_out_everywhere" | "ended_by_admin"): Promise<number> {
  return withTenant(principal, async (tx) => {
    const [user] = await tx.user.updateManyAndReturn({ where: { id: userId }, data: { sessionEpoch: { increment: 1 } }, select: { id: true, name: true } });
    if (!user) return 0;
    await recordAudit(tx, { actor: principal, action: "session.end", target: { id: user.id, name: user.name }, after: { sessions: "all", reason } });
    return 1;
  });
}

/** "Sign out everywhere": every browser session of the caller ends, this one included. A caller without a user record (a token of the identity provider) has none; that is not an error. */
export async function endOwnSessions(principal: Principal): Promise<void> {
  await moveSessionEpoch(principal, principal.userId, "sign_out_everywhere");
}

/** An admin ends another user's browser sessions, for a user of the admin's own organization only (404 otherwise, as for a user that does not exist). */
export async function endUserSessions(principal: Principal, userId: string): Promise<void> {
  if ((await moveSessionEpoch(principal, userId, "ended_by_admin")) === 0) throw notFound("User");
}

/**
 * The audit row of one session signed out (lib/api/sign-in-gate.ts), written after its revocation: the revocation
 * lives outside the tenant's tables (quarry_revoked_sessions, the connecting role's), so the two cannot share a
 * transaction, and a sign-out is never held back by its record.
 */
export async function recordSignOut(principal: Principal): Promise<void> {
  await withTenant(principal, async (tx) => {
    const user = await tx.user.findUnique({ where: { id: principal.userId }, select: { id: true, name: true } });
    if (user) await recordAudit(tx, { actor: principal, action: "session.sign_out", target: { id: user.id, name: user.name }, after: { sessions: "this one" } });
  });
}
