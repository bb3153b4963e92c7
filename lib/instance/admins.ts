import "server-only";
import type { Principal } from "@/lib/access/roles";
import { normalizeEmail } from "@/lib/auth/email";
import { getDb } from "@/lib/db/client";
import { forbidden, notFound } from "@/lib/errors";

/**
 * Whether the caller is an instance admin (migration 0053): a signed-in person (never an API key) whose account is
 * an active member of the organization they signed in to and holds the instance flag. Read on every request with
 * the connecting role, as sessions are, so a revocation or a deactivation holds at once on every replica.
 */
export async function isInstanceAdmin(principal: Principal): Promise<boolean> {
  if (principal.via === "api_key") return false;
  const { system } = await getDb();
  const rows = await system.query(
    `SELECT 1 FROM quarry_instance_admins a JOIN users u ON u.id = a.user_id
      WHERE a.user_id = $1 AND u.org_id = $2 AND u.status = 'active'`,
    [principal.userId, principal.orgId],
  );
  return rows.length > 0;
}

export async function requireInstanceAdmin(principal: Principal): Promise<void> {
  if (!(await isInstanceAdmin(principal))) throw forbidden("Instance admins only; the operator grants it with `npm run quarry -- instance-admin grant <email>`");
}

export interface InstanceAdminRow {
  email: string;
  organization: string;
  grantedAt: Date;
}

/** The command line's look-up of an account by e-mail (the one sign-in key): its id, or 404. */
async function accountId(email: string): Promise<string> {
  const { system } = await getDb();
  const [row] = await system.query<{ id: string }>("SELECT id FROM users WHERE email_key = $1", [normalizeEmail(email)]);
  if (!row) throw notFound(`Account '${email}'`);
  return row.id;
}

/** `quarry instance-admin grant <email>`: the only way to grant the flag. Granting it again changes nothing. */
export async function grantInstanceAdmin(email: string): Promise<void> {
  const id = await accountId(email);
  const { system } = await getDb();
  await system.query("INSERT INTO quarry_instance_admins (user_id) VALUES ($1) ON CONFLICT DO NOTHING", [id]);
}

/** `quarry instance-admin revoke <email>`: whether the account held it. */
export async function revokeInstanceAdmin(email: string): Promise<boolean> {
  const id = await accountId(email);
  const { system } = await getDb();
  return (await system.query("DELETE FROM quarry_instance_admins WHERE user_id = $1 RETURNING user_id", [id])).length > 0;
}

export async function listInstanceAdmins(): Promise<InstanceAdminRow[]> {
  const { system } = await getDb();
  return system.query<InstanceAdminRow>(
    `SELECT u.email, o.slug AS organization, a.granted_at AS "grantedAt"
       FROM quarry_instance_admins a JOIN users u ON u.id = a.user_id JOIN organizations o ON o.id = u.org_id
      ORDER BY u.email`,
  );
}
