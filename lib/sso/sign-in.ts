import "server-only";
import crypto from "node:crypto";
import { Role } from "@/lib/access/roles";
import { findOrganization } from "@/lib/auth/directory";
import { normalizeEmail } from "@/lib/auth/email";
import { hashPassword } from "@/lib/auth/password";
import type { SessionClaims } from "@/lib/auth/session";
import { newSessionId } from "@/lib/auth/session-revocation";
import { getDb } from "@/lib/db/client";
import { withTenant } from "@/lib/db/tenant";
import { newId } from "@/lib/ids";
import { log } from "@/lib/log";
import { adminOfEveryLocation, isLastOrganizationAdmin } from "@/lib/members/members";
import type { RoleMapping } from "./contract";
import { loadSsoConfig, slugOfProviderId, type SsoConfig } from "./settings";

const RANK: Record<Role, number> = { analyst: 0, general_manager: 1, admin: 2 };

/**
 * The role and locations a sign-in's claim grants: the highest role among the mappings whose value the
 * claim holds, with the union of that role's mappings' locations (any mapping of it with none: every
 * location); no match: the default role for every location, or nothing. Decided afresh at every sign-in,
 * so a group removed at the provider lowers the role at the next one.
 */
export function mappedAccess(sso: Pick<SsoConfig, "roleMappings" | "defaultRole">, claim: unknown): { role: Role; locationIds: string[] } | null {
  const held = new Set(typeof claim === "string" ? [claim] : Array.isArray(claim) ? claim.filter((v): v is string => typeof v === "string") : []);
  const matches = sso.roleMappings.filter((m) => held.has(m.value));
  if (matches.length === 0) return sso.defaultRole ? { role: sso.defaultRole, locationIds: [] } : null;
  const role = matches.reduce<Role>((best, m) => (RANK[m.role] > RANK[best] ? m.role : best), matches[0].role);
  const ofRole: RoleMapping[] = matches.filter((m) => m.role === role);
  if (ofRole.some((m) => m.location_ids.length === 0)) return { role, locationIds: [] };
  return { role, locationIds: [...new Set(ofRole.flatMap((m) => m.location_ids))].sort() };
}

type Outcome = { ok: true; claims: SessionClaims } | { ok: false; reason: string };

/**
 * A signed-in subject of an organization's provider, as Quarry's session claims. The ID token was verified
 * by openid-client (signature, issuer, audience, expiry, nonce) before this runs. Refused: an address outside
 * the organization's verified domains, one the provider says is unverified, an address with an account in
 * another organization or a deactivated one, and a claim no mapping grants. Otherwise the member is made
 * just in time, or their role and locations are set from the claim; a change moves their session epoch, so
 * their other sessions end as after an admin's change.
 */
export async function ssoSignIn(providerId: string, idToken: Record<string, unknown>): Promise<Outcome> {
  try {
    return await signInOnce(providerId, idToken);
  } catch (error) {
    // Two first sign-ins of one address at once: one made the member (users.email is unique); the other signs in as it.
    if ((error as { code?: unknown })?.code === "P2002") return signInOnce(providerId, idToken);
    throw error;
  }
}

async function signInOnce(providerId: string, idToken: Record<string, unknown>): Promise<Outcome> {
  const slug = slugOfProviderId(providerId);
  const org = slug ? await findOrganization(slug) : null;
  const sso = org ? await loadSsoConfig(org.id) : null;
  if (!org || !sso?.enabled) return { ok: false, reason: "no SSO for this provider id" };
  const email = typeof idToken.email === "string" ? idToken.email.trim() : "";
  const key = normalizeEmail(email);
  const domain = key.slice(key.lastIndexOf("@") + 1);
  if (!key.includes("@") || !sso.domains.includes(domain)) return { ok: false, reason: `e-mail domain '${domain}' is not one of the organization's` };
  if (idToken.email_verified === false) return { ok: false, reason: "the provider says the e-mail is not verified" };
  const access = mappedAccess(sso, idToken[sso.roleClaim]);
  if (!access) return { ok: false, reason: `claim '${sso.roleClaim}' matches no mapping and there is no default role` };

  const { system } = await getDb();
  const [holder] = await system.query<{ id: string; org_id: string; status: string }>(`SELECT id, org_id, status FROM users WHERE email_key = $1`, [key]);
  if (holder && holder.org_id !== org.id) return { ok: false, reason: "the address has an account in another organization" };
  if (holder && holder.status !== "active") return { ok: false, reason: "the member is deactivated" };
  const name = typeof idToken.name === "string" && idToken.name.trim() ? idToken.name.trim().slice(0, 200) : email;
  // A member made here signs in through the provider; their password is one nobody knows until a reset sets one.
  const passwordHash = holder ? null : await hashPassword(crypto.randomBytes(32).toString("base64url"));

  const user = await withTenant({ orgId: org.id }, async (tx) => {
    if (!holder) {
      return tx.user.create({
        data: { id: newId("usr"), orgId: org.id, email, emailKey: key, name, role: access.role, locationIds: access.locationIds, passwordHash: passwordHash!, lastSignInAt: new Date() },
      });
    }
    const current = await tx.user.findUniqueOrThrow({ where: { id: holder.id } });
    // The organization keeps an admin of every location: a claim that would demote its last one, or narrow them to
    // some locations, is not applied until another exists (refusing the sign-in instead would lock the organization
    // out of its own people admin).
    if (adminOfEveryLocation(current) && !adminOfEveryLocation(access) && (await isLastOrganizationAdmin(tx, holder.id))) {
      log.warn("sso sign-in kept the last admin's role and locations", { org: org.slug, user: holder.id, mapped: access.role, locations: access.locationIds });
      return tx.user.update({ where: { id: holder.id }, data: { lastSignInAt: new Date() } });
    }
    const changed = current.role !== access.role || [...current.locationIds].sort().join(",") !== access.locationIds.join(",");
    return tx.user.update({
      where: { id: holder.id },
      data: { role: access.role, locationIds: access.locationIds, lastSignInAt: new Date(), ...(changed ? { sessionEpoch: { increment: 1 } } : {}) },
    });
  });
  log.info("sso sign-in", { org: org.slug, user: user.id, role: user.role, made: !holder });
  return {
    ok: true,
    claims: {
      uid: user.id,
      sid: newSessionId(),
      org: org.slug,
      role: Role.parse(user.role),
      locations: user.locationIds.length > 0 ? user.locationIds : "*",
      epoch: user.sessionEpoch,
    },
  };
}

/**
 * Whether a member's password sign-in is refused because their organization signs in through SSO only:
 * everyone but its break-glass admins (who must still be active admins of every location).
 */
export async function passwordSignInRefused(user: { id: string; role: string; locationIds: string[]; org: { id: string } }): Promise<boolean> {
  const sso = await loadSsoConfig(user.org.id);
  if (!sso?.enabled || !sso.ssoOnly) return false;
  const breakGlass = sso.breakGlassUserIds.includes(user.id) && user.role === "admin" && user.locationIds.length === 0;
  return !breakGlass;
}
