import "server-only";
import type { Principal } from "@/lib/access/roles";
import { recordAudit } from "@/lib/audit/record";
import { withTenant } from "@/lib/db/tenant";
import type { Location } from "@/lib/db/generated/client";
import { conflict, notFound } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { requireOrganizationAdmin } from "@/lib/members/members";
import { pageBody, pageWindow, type PageQuery } from "@/lib/pagination";
import type { CreateLocationBody, UpdateLocationBody } from "./contract";

const view = (l: Location) => ({ id: l.id, code: l.code, name: l.name, city: l.city, region: l.region, created_at: l.createdAt, archived_at: l.archivedAt });

/** Locations of the caller's organization within the caller's location scope (enforced by RLS), by code; archived ones only when asked. */
export async function listLocations(principal: Principal, page: PageQuery & { archived?: boolean }) {
  const where = page.archived ? {} : { archivedAt: null };
  const [rows, total] = await withTenant(principal, (tx) =>
    Promise.all([tx.location.findMany({ where, orderBy: [{ code: "asc" }, { id: "asc" }], ...pageWindow(page) }), tx.location.count({ where })]),
  );
  return pageBody(rows.map(view), total, page);
}

const CODE_TAKEN = "Another location of the organization has this code";

/** Whether the organization already has a location with this code (other than `except`). */
async function codeTaken(principal: Principal, code: string, except?: string): Promise<boolean> {
  return withTenant(principal, async (tx) => (await tx.location.count({ where: { code, ...(except ? { id: { not: except } } : {}) } })) > 0);
}

export async function createLocation(principal: Principal, body: CreateLocationBody) {
  requireOrganizationAdmin(principal);
  if (await codeTaken(principal, body.code)) throw conflict(CODE_TAKEN);
  return withTenant(principal, async (tx) => {
    const created = view(await tx.location.create({ data: { id: newId("loc"), orgId: principal.orgId, ...body } }));
    await recordAudit(tx, { actor: principal, action: "location.create", target: { id: created.id, name: created.name }, after: created });
    return created;
  });
}

export async function updateLocation(principal: Principal, id: string, body: UpdateLocationBody) {
  requireOrganizationAdmin(principal);
  if (body.code !== undefined && (await codeTaken(principal, body.code, id))) throw conflict(CODE_TAKEN);
  const { archived, ...fields } = body;
  return withTenant(principal, async (tx) => {
    const current = await tx.location.findUnique({ where: { id } });
    if (!current) throw notFound("Location");
    const archivedAt = archived === undefined ? undefined : archived ? (current.archivedAt ?? new Date()) : null;
    const updated = view(await tx.location.update({ where: { id }, data: { ...fields, ...(archivedAt !== undefined ? { archivedAt } : {}) } }));
    await recordAudit(tx, { actor: principal, action: "location.update", target: { id, name: updated.name }, before: view(current), after: updated });
    return updated;
  });
}
