import "server-only";
import { recordAudit } from "@/lib/audit/record";
import { withTenant, type TenantTx } from "@/lib/db/tenant";
import type { ApiKey } from "@/lib/db/generated/client";
import { Invalid, notFound } from "@/lib/errors";
import { pageBody, pageWindow, type PageQuery } from "@/lib/pagination";
import type { CreateApiKeyBody } from "./api-keys-contract";
import { displayPrefix, newApiKey } from "./api-key-secret";
import type { Principal } from "@/lib/access/roles";

/** A key row as the API shows it: never its hash; its creator by name (`names`, creatorNames) where the member is known. */
function shown(row: ApiKey, names: ReadonlyMap<string, string> = new Map()) {
  return {
    id: row.id,
    name: row.name,
    prefix: displayPrefix(row.id),
    scopes: row.scopes,
    location_ids: row.locationIds && row.locationIds.length > 0 ? row.locationIds : null,
    expires_at: row.expiresAt,
    created_by: row.createdBy,
    created_by_name: names.get(row.createdBy) ?? null,
    created_at: row.createdAt,
    last_used_at: row.lastUsedAt,
    revoked_at: row.revokedAt,
  };
}

/**
 * Creates a key for the admin's organization and answers it once. Its locations must be locations the
 * admin sees (row-level security narrows the look-up to the admin's organization and location scope);
 * without any, the key gets the admin's own scope. The key is only ever stored as a keyed hash.
 */
export async function createApiKey(principal: Principal, body: CreateApiKeyBody) {
  if (body.expires_at && new Date(body.expires_at).getTime() <= Date.now()) {
    throw new Invalid([{ loc: ["body", "expires_at"], msg: "The expiry must be in the future", type: "value_error" }]);
  }
  const { id, key, hash } = newApiKey();
  const row = await withTenant(principal, async (tx) => {
    let locationIds = principal.locationIds;
    if (body.location_ids) {
      const wanted = [...new Set(body.location_ids)];
      const found = new Set((await tx.location.findMany({ where: { id: { in: wanted } }, select: { id: true } })).map((l) => l.id));
      const unknown = wanted.filter((l) => !found.has(l));
      if (unknown.length > 0) {
        throw new Invalid([{ loc: ["body", "location_ids"], msg: `Not locations of your organization you can see: ${unknown.join(", ")}`, type: "value_error" }]);
      }
      locationIds = wanted;
    }
    const created = await tx.apiKey.create({
      data: {
        id,
        orgId: principal.orgId,
        name: body.name,
        secretHash: new Uint8Array(hash),
        scopes: [...body.scopes],
        ...(locationIds ? { locationIds: [...locationIds] } : {}),
        expiresAt: body.expires_at ? new Date(body.expires_at) : null,
        createdBy: principal.userId,
      },
    });
    await recordAudit(tx, { actor: principal, action: "api_key.create", target: { id, name: body.name }, after: shown(created) });
    return { created, names: await creatorNames(tx, [created]) };
  });
  return { ...shown(row.created, row.names), key };
}

/** Names of the members who created `rows`, read under RLS (another organization's never resolve). */
async function creatorNames(tx: TenantTx, rows: readonly ApiKey[]): Promise<Map<string, string>> {
  const users = await tx.user.findMany({ where: { id: { in: [...new Set(rows.map((r) => r.createdBy))] } }, select: { id: true, name: true } });
  return new Map(users.map((u) => [u.id, u.name]));
}

/** The organization's keys, newest first, revoked ones included. */
export async function listApiKeys(principal: Principal, page: PageQuery) {
  const [rows, total, names] = await withTenant(principal, async (tx) => {
    const [rows, total] = await Promise.all([tx.apiKey.findMany({ orderBy: [{ createdAt: "desc" }, { id: "desc" }], ...pageWindow(page) }), tx.apiKey.count()]);
    return [rows, total, await creatorNames(tx, rows)] as const;
  });
  return pageBody(rows.map((row) => shown(row, names)), total, page);
}

/** Revokes a key of the admin's organization (another organization's key is not found); revoking twice is harmless. */
export async function revokeApiKey(principal: Principal, id: string): Promise<void> {
  await withTenant(principal, async (tx) => {
    const found = await tx.apiKey.findUnique({ where: { id } });
    if (!found) throw notFound("API key");
    if (found.revokedAt) return;
    const revoked = await tx.apiKey.update({ where: { id }, data: { revokedAt: new Date(), revokedBy: principal.userId } });
    await recordAudit(tx, { actor: principal, action: "api_key.revoke", target: { id, name: found.name }, before: shown(found), after: shown(revoked) });
  });
}
