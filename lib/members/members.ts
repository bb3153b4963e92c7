import "server-only";
import { isOrganizationAdmin, type Principal, type Role } from "@/lib/access/roles";
import { readAttributes } from "@/lib/access/attributes";
import { recordAudit } from "@/lib/audit/record";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import type { User } from "@/lib/db/generated/client";
import { Invalid, conflict, forbidden, notFound } from "@/lib/errors";
import { pageBody, pageWindow, type PageQuery } from "@/lib/pagination";
import type { UpdateMemberBody } from "./contract";

/** A member as the API shows them: never their password hash or session epoch. */
export function memberView(row: User) {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role as Role,
    location_ids: row.locationIds,
    attributes: readAttributes(row.attributes),
    status: row.status as "active" | "deactivated",
    last_sign_in_at: row.lastSignInAt,
    created_at: row.createdAt,
  };
}

/**
 * Who may administer members and locations: an admin of every location. A location-scoped admin could
 * otherwise grant locations, or every location, beyond their own scope, so they are refused outright.
 */
export function requireOrganizationAdmin(principal: Principal): void {
  if (!isOrganizationAdmin(principal)) {
    throw forbidden("Members and locations are managed by admins of every location");
  }
}

/**
 * The locations a member may be granted: ids of the caller's organization (row-level security hides every
 * other organization's, so a foreign id reads as unknown), not archived. Answers them de-duplicated.
 */
export async function grantableLocations(tx: TenantTx, ids: readonly string[], field: string[]): Promise<string[]> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return [];
  const found = await tx.location.findMany({ where: { id: { in: wanted } }, select: { id: true, archivedAt: true } });
  const known = new Map(found.map((l) => [l.id, l]));
  const unknown = wanted.filter((id) => !known.has(id));
  if (unknown.length > 0) throw new Invalid([{ loc: field, msg: `Not locations of your organization: ${unknown.join(", ")}`, type: "value_error" }]);
  const archived = wanted.filter((id) => known.get(id)?.archivedAt);
  if (archived.length > 0) throw new Invalid([{ loc: field, msg: `Archived locations cannot be granted: ${archived.join(", ")}`, type: "value_error" }]);
  return wanted;
}

/**
 * Refuses a change that would leave the organization without an active admin. The active admins' rows are
 * locked first, so two admins demoting each other at once are serialized: the second sees the first's
 * change (PostgreSQL re-checks a locked row's condition after the wait) and is refused.
 */
async function keepAnAdmin(tx: TenantTx, losing: string, what: string): Promise<void> {
  if (await isLastOrganizationAdmin(tx, losing)) throw conflict(`The organization's last active admin of every location cannot be ${what}`);
}

/** Whether a member's row (or a role and locations about to be given) makes an admin of every location (isOrganizationAdmin). */
export function adminOfEveryLocation(member: { role: string; locationIds: readonly string[] }): boolean {
  return member.role === "admin" && member.locationIds.length === 0;
}

/**
 * Whether `id` is the organization's only active admin of every location, with those admins' rows locked until the
 * transaction ends: the one rule for every change that could take away the last person who administers people
 * and places (an admin's change here, SSO's role mapping). An admin of some locations does not count: they
 * cannot administer people (requireOrganizationAdmin).
 */
export async function isLastOrganizationAdmin(tx: TenantTx, id: string): Promise<boolean> {
  const admins = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM users WHERE role = 'admin' AND status = 'active' AND cardinality(location_ids) = 0 ORDER BY id FOR UPDATE`;
  return admins.length <= 1 && admins.some((a) => a.id === id);
}

export async function listMembers(principal: Principal, page: PageQuery) {
  requireOrganizationAdmin(principal);
  const [rows, total] = await withTenant(principal, (tx) =>
    Promise.all([tx.user.findMany({ orderBy: [{ name: "asc" }, { id: "asc" }], ...pageWindow(page) }), tx.user.count()]),
  );
  return pageBody(rows.map(memberView), total, page);
}

/**
 * Changes a member. A new role or new locations move the session epoch on (migration 0024's trigger), and so
 * does a change of status here, so every session of the member ends at its next request on every replica.
 */
export async function updateMember(principal: Principal, id: string, body: UpdateMemberBody) {
  requireOrganizationAdmin(principal);
  return withTenant(principal, async (tx) => {
    const current = await tx.user.findUnique({ where: { id } });
    if (!current) throw notFound("Member");
    const staysAdmin = body.status !== "deactivated" && adminOfEveryLocation({ role: body.role ?? current.role, locationIds: body.location_ids ?? current.locationIds });
    if (current.status === "active" && adminOfEveryLocation(current) && !staysAdmin) {
      await keepAnAdmin(tx, id, body.status === "deactivated" ? "deactivated" : (body.role ?? "admin") !== "admin" ? "demoted" : "narrowed to some locations");
    }
    const locationIds = body.location_ids === undefined ? undefined : await grantableLocations(tx, body.location_ids, ["body", "location_ids"]);
    const statusChanges = body.status !== undefined && body.status !== current.status;
    const row = await tx.user.update({
      where: { id },
      data: {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.role !== undefined ? { role: body.role } : {}),
        ...(locationIds !== undefined ? { locationIds } : {}),
        ...(body.attributes !== undefined ? { attributes: body.attributes } : {}),
        ...(body.status !== undefined ? { status: body.status } : {}),
        ...(statusChanges ? { sessionEpoch: { increment: 1 } } : {}),
      },
    });
    const after = memberView(row);
    await recordAudit(tx, { actor: principal, action: "member.update", target: { id, name: row.name }, before: memberView(current), after });
    if (statusChanges && row.status === "deactivated") {
      await recordAudit(tx, { actor: principal, action: "session.end", target: { id, name: row.name }, after: { sessions: "all", reason: "deactivated" } });
    }
    return after;
  });
}

/**
 * Deletes a member. Refused for yourself, for the last active admin, and for a member whose report
 * schedules or alert rules still run in their name (deactivate them instead: the schedules keep a visible owner).
 */
export async function deleteMember(principal: Principal, id: string): Promise<void> {
  requireOrganizationAdmin(principal);
  if (id === principal.userId) throw conflict("You cannot delete yourself; another admin can");
  await withTenant(principal, async (tx) => {
    const current = await tx.user.findUnique({ where: { id } });
    if (!current) throw notFound("Member");
    if (current.role === "admin" && current.status === "active") await keepAnAdmin(tx, id, "deleted");
    const [schedules, rules] = await Promise.all([tx.reportSchedule.count({ where: { createdBy: id } }), tx.notificationRule.count({ where: { createdBy: id } })]);
    if (schedules + rules > 0) {
      throw conflict(`This member owns ${schedules} report schedule(s) and ${rules} alert rule(s); deactivate them instead, which keeps those running under their name`);
    }
    await tx.user.delete({ where: { id } });
    await recordAudit(tx, { actor: principal, action: "member.delete", target: { id, name: current.name }, before: memberView(current) });
  });
}
