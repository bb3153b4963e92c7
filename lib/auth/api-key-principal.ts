import "server-only";
import { Unauthenticated } from "@/lib/errors";
import { log } from "@/lib/log";
import { ApiKeyScope } from "@/lib/access/api-key-scopes";
import { apiKeyIdOf, apiKeyMatches } from "./api-key-secret";
import { findApiKey, touchApiKey } from "./directory";
import type { Principal } from "@/lib/access/roles";

/**
 * The principal of an organization API key sent as `Authorization: Bearer qk_…`: an admin of the key's
 * organization, capped by the key's scopes (checked per endpoint by `authorize`) and location scope. The
 * row is read on every request, so revocation, expiry and the maker's deactivation or deletion hold at once
 * everywhere (the maker was shown the secret and may still hold it). Every refusal is the same 401 whatever the
 * cause (unknown id, wrong secret, revoked, expired, maker gone), and never repeats the key.
 */
export async function principalFromApiKey(token: string): Promise<Principal> {
  const refused = new Unauthenticated("API key is invalid, revoked or expired, or its maker is no longer an active member");
  const id = apiKeyIdOf(token);
  if (!id) throw refused;
  const row = await findApiKey(id);
  if (!row || !apiKeyMatches(token, row.secretHash) || row.revoked || row.expired || !row.makerActive) throw refused;
  if (row.stale) {
    // Last use is kept to the minute: one small write per key per minute at most, and never a reason to refuse.
    await touchApiKey(row.id).catch((error: unknown) => log.warn("api key last-used update failed", { keyId: row.id, error: String(error) }));
  }
  const scopes = row.scopes.flatMap((s) => (ApiKeyScope.safeParse(s).success ? [s as ApiKeyScope] : []));
  const locationIds = row.locationIds && row.locationIds.length > 0 ? row.locationIds : null;
  return { userId: row.id, orgId: row.org.id, orgSlug: row.org.slug, orgName: row.org.name, role: "admin", locationIds, via: "api_key", scopes };
}
