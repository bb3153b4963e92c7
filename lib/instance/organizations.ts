import "server-only";
import type { Principal } from "@/lib/access/roles";
import { getDb } from "@/lib/db/client";
import { withTenant } from "@/lib/db/tenant";
import { initOrganization } from "@/lib/members/setup";
import { pageBody, type PageQuery } from "@/lib/pagination";
import { requireInstanceAdmin } from "./admins";
import type { CreateOrganizationBody } from "./contract";

interface OrganizationRow {
  id: string;
  slug: string;
  name: string;
  time_zone: string;
  currency: string;
  created_at: Date;
}

const COLUMNS = "id, slug, name, time_zone, currency, created_at";

/** An organization as the instance's page shows it; its member count is its own tenant data, read under its RLS. */
async function withMemberCount(org: OrganizationRow) {
  const members = await withTenant({ orgId: org.id }, (tx) => tx.user.count());
  return { ...org, members, created_at: org.created_at.toISOString() };
}

/** The install's organizations, oldest first. The registry itself is the instance's, read with the connecting role. */
export async function listOrganizations(principal: Principal, page: PageQuery) {
  await requireInstanceAdmin(principal);
  const { system } = await getDb();
  const [rows, [{ total }]] = await Promise.all([
    system.query<OrganizationRow>(`SELECT ${COLUMNS} FROM organizations ORDER BY created_at, id LIMIT $1 OFFSET $2`, [page.limit, page.offset]),
    system.query<{ total: number }>("SELECT count(*)::int AS total FROM organizations"),
  ]);
  const items = [];
  for (const row of rows) items.push(await withMemberCount(row));
  return pageBody(items, total, page);
}

/** An organization and its first admin's one-time link: `quarry init`'s rule (lib/members/setup.ts), from the page. */
export async function createOrganization(principal: Principal, body: CreateOrganizationBody) {
  await requireInstanceAdmin(principal);
  const made = await initOrganization({ slug: body.slug, name: body.organization_name, timeZone: body.time_zone, currency: body.currency, adminEmail: body.admin_email }, `instance admin ${principal.userId}`);
  const { system } = await getDb();
  const [row] = await system.query<OrganizationRow>(`SELECT ${COLUMNS} FROM organizations WHERE id = $1`, [made.orgId]);
  return { organization: await withMemberCount(row), admin_email: body.admin_email, link: made.link, created: made.created };
}
