import "server-only";
import type { Principal, Role } from "@/lib/access/roles";
import { normalizeEmail } from "@/lib/auth/email";
import { hashPassword } from "@/lib/auth/password";
import { config } from "@/lib/config";
import { recordAudit } from "@/lib/audit/record";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import type { MemberInvitation } from "@/lib/db/generated/client";
import { Gone, NotFound, conflict, notFound } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { pageBody, pageWindow, type PageQuery } from "@/lib/pagination";
import type { InviteBody } from "./contract";
import { sendAccountMail } from "./mail";
import { grantableLocations, requireOrganizationAdmin } from "./members";
import { newLinkToken, linkTokenHash, organizationOfLink } from "./tokens";

/** How long an invitation link works: a week, as Metabase's and Grafana's do. */
export const INVITATION_DAYS = 7;

function invitationStatus(row: MemberInvitation, now = new Date()) {
  if (row.acceptedAt) return "accepted" as const;
  if (row.revokedAt) return "revoked" as const;
  return row.expiresAt <= now ? ("expired" as const) : ("pending" as const);
}

function invitationView(row: MemberInvitation) {
  return {
    id: row.id,
    email: row.email,
    role: row.role as Role,
    location_ids: row.locationIds,
    expires_at: row.expiresAt,
    created_by: row.createdBy,
    created_at: row.createdAt,
    status: invitationStatus(row),
  };
}

export const invitationLink = (token: string) => `${config().publicUrl.replace(/\/$/, "")}/invite/${token}`;

/**
 * Writes an invitation (replacing the address's pending one) and answers the link once. Used by an admin
 * (`createdBy` their id) and by the instance's command (`quarry init`, createdBy null).
 */
export async function writeInvitation(tx: TenantTx, orgId: string, input: { email: string; role: Role; locationIds: string[]; createdBy: string | null }) {
  const emailKey = normalizeEmail(input.email);
  if (await tx.user.findFirst({ where: { emailKey }, select: { id: true } })) throw conflict("This address is already a member of the organization");
  await tx.memberInvitation.updateMany({ where: { emailKey, acceptedAt: null, revokedAt: null }, data: { revokedAt: new Date() } });
  const { token, hash } = newLinkToken();
  const row = await tx.memberInvitation.create({
    data: {
      id: newId("inv"),
      orgId,
      email: input.email.trim(),
      emailKey,
      role: input.role,
      locationIds: input.locationIds,
      tokenHash: new Uint8Array(hash),
      expiresAt: new Date(Date.now() + INVITATION_DAYS * 24 * 3600 * 1000),
      createdBy: input.createdBy,
    },
  });
  return { row, link: invitationLink(token) };
}

/**
 * Invites an address into the admin's organization. The answer is the same whether the address has an
 * account in another organization or none: nothing here looks outside the organization.
 */
export async function inviteMember(principal: Principal, body: InviteBody) {
  requireOrganizationAdmin(principal);
  const { row, link } = await withTenant(principal, async (tx) => {
    const written = await writeInvitation(tx, principal.orgId, {
      email: body.email,
      role: body.role,
      locationIds: await grantableLocations(tx, body.location_ids, ["body", "location_ids"]),
      createdBy: principal.userId,
    });
    await recordAudit(tx, { actor: principal, action: "invitation.create", target: { id: written.row.id, name: written.row.email }, after: invitationView(written.row) });
    return written;
  });
  const sent = await sendAccountMail(principal.orgId, {
    kind: "invitation",
    to: row.email,
    subject: `You are invited to ${principal.orgName} on Quarry`,
    body: [`You have been invited to join ${principal.orgName} on Quarry as ${row.role.replace("_", " ")}.`, "", `Choose a password here (the link works once, for ${INVITATION_DAYS} days):`, link].join("\n"),
  });
  return { ...invitationView(row), link, delivery: sent.delivery, delivery_detail: sent.detail };
}

export async function listInvitations(principal: Principal, page: PageQuery) {
  requireOrganizationAdmin(principal);
  const [rows, total] = await withTenant(principal, (tx) =>
    Promise.all([tx.memberInvitation.findMany({ orderBy: [{ createdAt: "desc" }, { id: "desc" }], ...pageWindow(page) }), tx.memberInvitation.count()]),
  );
  return pageBody(rows.map(invitationView), total, page);
}

export async function revokeInvitation(principal: Principal, id: string): Promise<void> {
  requireOrganizationAdmin(principal);
  await withTenant(principal, async (tx) => {
    const found = await tx.memberInvitation.findUnique({ where: { id } });
    if (!found) throw notFound("Invitation");
    if (found.acceptedAt || found.revokedAt) return;
    const revoked = await tx.memberInvitation.update({ where: { id }, data: { revokedAt: new Date() } });
    await recordAudit(tx, { actor: principal, action: "invitation.revoke", target: { id, name: found.email }, before: invitationView(found), after: invitationView(revoked) });
  });
}

const UNKNOWN_LINK = "This invitation link is not valid";
const ADDRESS_IN_USE = "This invitation cannot be accepted for this address; ask the person who invited you for an invitation to another address";

/** What the accept page shows before the form: whose invitation it is, or why it no longer works. */
export async function invitationForToken(token: string) {
  const orgId = /^[A-Za-z0-9_-]{43}$/.test(token) ? await organizationOfLink("member_invitations", token) : null;
  if (!orgId) return { status: "unknown" as const };
  return withTenant({ orgId }, async (tx) => {
    const row = await tx.memberInvitation.findUnique({ where: { tokenHash: new Uint8Array(linkTokenHash(token)) } });
    const org = await tx.organization.findUnique({ where: { id: orgId }, select: { name: true } });
    if (!row || !org) return { status: "unknown" as const };
    return { status: invitationStatus(row), email: row.email, organization: org.name, role: row.role as Role };
  });
}

/**
 * Spends an invitation: creates its account (address, role, locations) with the chosen password. The
 * invitation's row is locked first, so of two accepts at once the second sees the first's and is refused
 * (410); a used, revoked or expired link is refused the same way, an unknown one with 404.
 */
export async function acceptInvitation(body: { token: string; name: string; password: string }) {
  const orgId = await organizationOfLink("member_invitations", body.token);
  if (!orgId) throw new NotFound(UNKNOWN_LINK);
  const passwordHash = await hashPassword(body.password);
  return withTenant({ orgId }, async (tx) => {
    const [locked] = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM member_invitations WHERE token_hash = ${new Uint8Array(linkTokenHash(body.token))} FOR UPDATE`;
    if (!locked) throw new NotFound(UNKNOWN_LINK);
    const invitation = await tx.memberInvitation.findUniqueOrThrow({ where: { id: locked.id } });
    const status = invitationStatus(invitation);
    if (status !== "pending") throw new Gone(status === "expired" ? "This invitation has expired; ask for a new one" : "This invitation was already used or withdrawn; ask for a new one");
    // Locations archived since the invitation are left out rather than granted.
    const live = await tx.location.findMany({ where: { id: { in: invitation.locationIds }, archivedAt: null }, select: { id: true } });
    const locationIds = invitation.locationIds.filter((id) => live.some((l) => l.id === id));
    if (invitation.locationIds.length > 0 && locationIds.length === 0) throw new Gone("Every location of this invitation was archived; ask for a new one");
    const userId = newId("usr");
    try {
      await tx.user.create({
        data: { id: userId, orgId, email: invitation.email, emailKey: invitation.emailKey, name: body.name, role: invitation.role, locationIds, passwordHash },
      });
    } catch (error) {
      // An address is one account on the server (users.email is unique): one held elsewhere cannot join here.
      if ((error as { code?: unknown })?.code === "P2002") throw conflict(ADDRESS_IN_USE);
      throw error;
    }
    const accepted = await tx.memberInvitation.update({ where: { id: invitation.id }, data: { acceptedAt: new Date(), acceptedBy: userId } });
    // The invitee has no session yet: the new account is the actor.
    await recordAudit(tx, { actor: { system: userId }, action: "invitation.accept", target: { id: invitation.id, name: invitation.email }, before: invitationView(invitation), after: invitationView(accepted) });
    const org = await tx.organization.findUniqueOrThrow({ where: { id: orgId }, select: { name: true } });
    return { email: invitation.email, organization: org.name };
  });
}
