import "server-only";
import type { Principal } from "@/lib/access/roles";
import { findUserForLogin } from "@/lib/auth/directory";
import { hashPassword } from "@/lib/auth/password";
import { config } from "@/lib/config";
import { recordAudit } from "@/lib/audit/record";
import { withTenant } from "@/lib/db/tenant";
import { Gone, NotFound, conflict, notFound } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { log } from "@/lib/log";
import { sendAccountMail } from "./mail";
import { requireOrganizationAdmin } from "./members";
import { linkTokenHash, newLinkToken, organizationOfLink } from "./tokens";

/** How long a reset link works. */
export const RESET_MINUTES = 60;

/** What a request for a reset answers, for every address alike. */
export const RESET_REQUESTED = "If an account uses this address, a link to choose a new password is on its way. It works once, for an hour.";

const resetLink = (token: string) => `${config().publicUrl.replace(/\/$/, "")}/reset-password/${token}`;

/** Writes a reset for an active member and e-mails its link; answers the link and how the e-mail went. */
async function issueReset(orgId: string, userId: string, admin?: Principal) {
  const { token, hash } = newLinkToken();
  const user = await withTenant({ orgId }, async (tx) => {
    const found = await tx.user.findUnique({ where: { id: userId }, select: { email: true, name: true, status: true } });
    if (!found) throw notFound("Member");
    if (found.status !== "active") throw conflict("This member is deactivated; reactivate them first");
    await tx.passwordReset.create({ data: { id: newId("pwr"), orgId, userId, tokenHash: new Uint8Array(hash), expiresAt: new Date(Date.now() + RESET_MINUTES * 60_000) } });
    // A reset the member asked for is theirs, not an admin's change.
    if (admin) await recordAudit(tx, { actor: admin, action: "member.password_reset", target: { id: userId, name: found.name } });
    return found;
  });
  const link = resetLink(token);
  const sent = await sendAccountMail(orgId, {
    kind: "password_reset",
    to: user.email,
    subject: "Choose a new Quarry password",
    body: [`Someone asked to reset the password of ${user.email} on Quarry.`, "", `Choose a new one here (the link works once, for ${RESET_MINUTES} minutes):`, link, "", "If it was not you, ignore this message."].join("\n"),
  });
  return { link, delivery: sent.delivery, delivery_detail: sent.detail };
}

/** An admin sends a member a reset link (and sees it, to copy). */
export async function resetMemberPassword(principal: Principal, userId: string) {
  requireOrganizationAdmin(principal);
  return issueReset(principal.orgId, userId, principal);
}

/**
 * Anyone asks for a reset by address. The answer never says whether the address has an account, and it
 * does not wait for the e-mail either (the time of an answer would tell): the work goes on after it.
 * Answers the work's promise for tests; the endpoint does not await it.
 */
export function requestPasswordReset(email: string): Promise<void> {
  return (async () => {
    const user = await findUserForLogin(email);
    if (user) await issueReset(user.org.id, user.id);
  })().catch((error) => log.warn("password reset not issued", { reason: error instanceof Error ? error.message : String(error) }));
}

const UNKNOWN_LINK = "This password reset link is not valid";

/** Spends a reset link: the new password, every session of the account ended, every other open link of it spent too. */
export async function completePasswordReset(body: { token: string; password: string }): Promise<void> {
  const orgId = await organizationOfLink("password_resets", body.token);
  if (!orgId) throw new NotFound(UNKNOWN_LINK);
  const passwordHash = await hashPassword(body.password);
  await withTenant({ orgId }, async (tx) => {
    const [reset] = await tx.$queryRaw<{ id: string; user_id: string; used: boolean; expired: boolean }[]>`
      SELECT id, user_id, used_at IS NOT NULL AS used, expires_at <= now() AS expired
        FROM password_resets WHERE token_hash = ${new Uint8Array(linkTokenHash(body.token))} FOR UPDATE`;
    if (!reset) throw new NotFound(UNKNOWN_LINK);
    if (reset.used) throw new Gone("This link was already used; ask for a new one");
    if (reset.expired) throw new Gone("This link has expired; ask for a new one");
    const user = await tx.user.findUnique({ where: { id: reset.user_id }, select: { status: true } });
    if (user?.status !== "active") throw new Gone("This account is deactivated");
    // A new password hash moves the session epoch on (migration 0024's trigger): every session ends.
    await tx.user.update({ where: { id: reset.user_id }, data: { passwordHash } });
    await tx.passwordReset.updateMany({ where: { userId: reset.user_id, usedAt: null }, data: { usedAt: new Date() } });
  });
}
