import "server-only";
import { getDb } from "@/lib/db/client";
import { normalizeEmail } from "./email";
import type { Role } from "@/lib/access/roles";

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

/** An organization as its pages, reports and messages read figures: its identity, time zone and currency (ISO 4217). */
export interface OrgProfile extends OrgIdentity {
  currency: string;
}

export async function findOrganization(slugOrId: string): Promise<OrgProfile | null> {
  const { system } = await getDb();
  const rows = await system.query<OrgProfile>(
    `SELECT id, slug, name, time_zone AS "timeZone", currency FROM organizations WHERE slug = $1 OR id = $1 LIMIT 1`,
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
  /** Sessions carry it; a later one is refused (migration 0024). */
  sessionEpoch: number;
  passwordHash: string;
  org: OrgIdentity;
}

/**
 * The user an e-mail signs in as: by its normalised key (lib/auth/email.ts), the one the throttle counts
 * under too. A deactivated member is not found (migration 0044): their sign-in fails like an unknown address.
 */
export async function findUserForLogin(email: string): Promise<LoginUser | null> {
  const key = normalizeEmail(email);
  if (!key) return null;
  const { system } = await getDb();
  const rows = await system.query<Omit<LoginUser, "org"> & { orgId: string; orgSlug: string; orgName: string; timeZone: string }>(
    `SELECT u.id, u.email, u.name, u.role, u.location_ids AS "locationIds", u.session_epoch AS "sessionEpoch", u.password_hash AS "passwordHash",
            o.id AS "orgId", o.slug AS "orgSlug", o.name AS "orgName", o.time_zone AS "timeZone"
       FROM users u JOIN organizations o ON o.id = u.org_id
      WHERE u.email_key = $1 AND u.status = 'active'`,
    [key],
  );
  const row = rows[0];
  if (!row) return null;
  const { orgId, orgSlug, orgName, timeZone, ...user } = row;
  return { ...user, org: { id: orgId, slug: orgSlug, name: orgName, timeZone } };
}

/**
 * The active member of `orgId` a bearer token names: its subject as a user id, else its e-mail claim by the one
 * e-mail key (an identity provider's subject is its own id). Read on every request, so a deactivated or deleted
 * member's tokens are refused from the next request on every replica. null when no active member matches.
 */
export async function findBearerMember(orgId: string, subject: string, email: string | null): Promise<string | null> {
  const emailKey = email ? normalizeEmail(email) : null;
  const { system } = await getDb();
  const rows = await system.query<{ id: string }>(
    `SELECT id FROM users
      WHERE org_id = $1 AND status = 'active' AND (id = $2 OR ($3::text <> '' AND email_key = $3))
      ORDER BY id = $2 DESC LIMIT 1`,
    [orgId, subject, emailKey ?? ""],
  );
  return rows[0]?.id ?? null;
}

/** A session's user as the database has it now, and whether that session was signed out. */
export interface SessionUser {
  id: string;
  role: string;
  locationIds: string[];
  sessionEpoch: number;
  org: OrgIdentity;
  signedOut: boolean;
}

/**
 * What every cookie-authenticated request checks its session against (lib/auth/session.ts): the
 * user's current row, its organization and the sign-out record, in one round trip (a primary-key
 * probe of users and of quarry_revoked_sessions, plus the organization by primary key). null when
 * the user no longer exists or is deactivated.
 */
export async function findSessionUser(userId: string, sessionId: string): Promise<SessionUser | null> {
  const { system } = await getDb();
  const rows = await system.query<Omit<SessionUser, "org"> & { orgId: string; orgSlug: string; orgName: string; timeZone: string }>(
    `SELECT u.id, u.role, u.location_ids AS "locationIds", u.session_epoch AS "sessionEpoch",
            o.id AS "orgId", o.slug AS "orgSlug", o.name AS "orgName", o.time_zone AS "timeZone",
            EXISTS (SELECT 1 FROM quarry_revoked_sessions r WHERE r.session_id = $2) AS "signedOut"
       FROM users u JOIN organizations o ON o.id = u.org_id
      WHERE u.id = $1 AND u.status = 'active'`,
    [userId, sessionId],
  );
  const row = rows[0];
  if (!row) return null;
  const { orgId, orgSlug, orgName, timeZone, ...user } = row;
  return { ...user, org: { id: orgId, slug: orgSlug, name: orgName, timeZone } };
}

/** An organization API key's row as a request checks it (lib/auth/api-keys.ts), with its organization. */
export interface ApiKeyRow {
  id: string;
  secretHash: Buffer;
  scopes: string[];
  locationIds: string[] | null;
  expired: boolean;
  revoked: boolean;
  /** Whether last_used_at is older than a minute (or unset), so the request should record its use. */
  stale: boolean;
  /** Whether the admin who made the key is still an active member of its organization. */
  makerActive: boolean;
  org: OrgIdentity;
}

/**
 * A key by its id, read on every request it authenticates (one primary-key probe joined to its
 * organization and its maker), so a revocation, an expiry or the maker's deactivation or deletion holds at once on
 * every replica. Expiry and revocation are judged by the database's clock in the same query.
 */
export async function findApiKey(id: string): Promise<ApiKeyRow | null> {
  const { system } = await getDb();
  const rows = await system.query<Omit<ApiKeyRow, "org" | "secretHash"> & { secretHash: Buffer | Uint8Array; orgId: string; orgSlug: string; orgName: string; timeZone: string }>(
    `SELECT k.id, k.secret_hash AS "secretHash", k.scopes, k.location_ids AS "locationIds",
            (k.expires_at IS NOT NULL AND k.expires_at <= now()) AS expired, (k.revoked_at IS NOT NULL) AS revoked,
            (k.last_used_at IS NULL OR k.last_used_at < now() - interval '1 minute') AS stale,
            EXISTS (SELECT 1 FROM users u WHERE u.id = k.created_by AND u.org_id = k.org_id AND u.status = 'active') AS "makerActive",
            o.id AS "orgId", o.slug AS "orgSlug", o.name AS "orgName", o.time_zone AS "timeZone"
       FROM api_keys k JOIN organizations o ON o.id = k.org_id
      WHERE k.id = $1`,
    [id],
  );
  const row = rows[0];
  if (!row) return null;
  const { orgId, orgSlug, orgName, timeZone, secretHash, ...key } = row;
  return { ...key, secretHash: Buffer.from(secretHash), org: { id: orgId, slug: orgSlug, name: orgName, timeZone } };
}

/** Records that a key was used (at most once a minute per key: the caller asks only when the row is stale). */
export async function touchApiKey(id: string): Promise<void> {
  const { system } = await getDb();
  await system.query(
    `UPDATE api_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
    [id],
  );
}
