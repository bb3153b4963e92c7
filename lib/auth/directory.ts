import "server-only";
import { getDb } from "@/lib/db/client";
import type { Role } from "./roles";

/**
 * Identity look-ups made before a tenant is known (which organization a token
 * names, which user signs in). They run with the connecting role and return
 * only identity fields; tenant data is never read here.
 */
export interface OrgIdentity {
  id: string;
  slug: string;
  name: string;
  timeZone: string;
}

export async function findOrganization(slugOrId: string): Promise<OrgIdentity | null> {
  const { system } = await getDb();
  const rows = await system.query<OrgIdentity>(
    `SELECT id, slug, name, time_zone AS "timeZone" FROM organizations WHERE slug = $1 OR id = $1 LIMIT 1`,
    [slugOrId],
  );
  return rows[0] ?? null;
}

export interface LoginUser {
  id: string;
  email: string;
  name: string;
  role: Role;
  locationIds: string[];
  passwordHash: string;
  org: OrgIdentity;
}

export async function findUserForLogin(email: string): Promise<LoginUser | null> {
  const { system } = await getDb();
  const rows = await system.query<Omit<LoginUser, "org"> & { orgId: string; orgSlug: string; orgName: string; timeZone: string }>(
    `SELECT u.id, u.email, u.name, u.role, u.location_ids AS "locationIds", u.password_hash AS "passwordHash",
            o.id AS "orgId", o.slug AS "orgSlug", o.name AS "orgName", o.time_zone AS "timeZone"
       FROM users u JOIN organizations o ON o.id = u.org_id
      WHERE lower(u.email) = lower($1)`,
    [email],
  );
  const row = rows[0];
  if (!row) return null;
  const { orgId, orgSlug, orgName, timeZone, ...user } = row;
  return { ...user, org: { id: orgId, slug: orgSlug, name: orgName, timeZone } };
}
