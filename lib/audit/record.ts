import "server-only";
import type { Principal } from "@/lib/access/roles";
import type { TenantTx } from "@/lib/db/tenant";
import { newId } from "@/lib/ids";
import { targetKindOf, type AuditAction } from "./actions";
import { currentAuditRequest } from "./context";
import { maskSecrets } from "./mask";

/** Who made a change: a signed-in person or API key (their principal), or no one (`system`: a command, an invitee). */
export type AuditActor = Principal | { system: string };

export interface AuditEntry {
  actor: AuditActor;
  action: AuditAction;
  /** The thing changed; its kind is the action's (the part before the dot). */
  target: { id: string | null; name?: string | null };
  /** The target as the API shows it before and after the change (null: it did not exist / no longer exists). */
  before?: unknown;
  after?: unknown;
  /** Field names the target's schema declares secret beyond the masking rule's own (a channel kind's SECRET_FIELDS). */
  secretFields?: readonly string[];
}

/** Job principals (lib/documents/indexing) act for no person: their user id says which job. */
const SYSTEM_USER = /^system:/;

function actorColumns(actor: AuditActor): { kind: "user" | "api_key" | "system"; id: string | null } {
  if ("system" in actor) return { kind: "system", id: actor.system };
  if (actor.via === "api_key") return { kind: "api_key", id: actor.userId };
  return SYSTEM_USER.test(actor.userId) ? { kind: "system", id: actor.userId } : { kind: "user", id: actor.userId };
}

/**
 * Records one change in the audit log, in `tx`: the tenant transaction that makes the change, so a change that
 * rolls back leaves no row and one that commits always has its row. The actor's display name is read in the same
 * statement (a person's name, an API key's name), the address from the request's context, secrets are masked.
 */
export async function recordAudit(tx: TenantTx, entry: AuditEntry): Promise<void> {
  const { sql, params } = auditStatement(entry);
  await tx.$executeRawUnsafe(sql, ...params);
}

/**
 * recordAudit's statement, for a transaction that is not Prisma's: a bulk transaction (lib/db/bulk.ts) after it
 * entered the tenant, whose change (a data load, a drop) the row must commit or roll back with.
 */
export function auditStatement(entry: AuditEntry): { sql: string; params: unknown[] } {
  const actor = actorColumns(entry.actor);
  const address = currentAuditRequest()?.address ?? null;
  const secrets = new Set(entry.secretFields ?? []);
  const before = entry.before === undefined || entry.before === null ? null : JSON.stringify(maskSecrets(entry.before, secrets));
  const after = entry.after === undefined || entry.after === null ? null : JSON.stringify(maskSecrets(entry.after, secrets));
  const sql = `
    INSERT INTO audit_events (id, org_id, actor_kind, actor_id, actor_name, address, action, target_kind, target_id, target_name, before, after)
    VALUES (
      $1, quarry_current_org(), $2, $3,
      CASE $2
        WHEN 'user' THEN (SELECT name FROM users WHERE id = $3)
        WHEN 'api_key' THEN (SELECT name FROM api_keys WHERE id = $3)
        -- An invitee accepting is named by the account the acceptance made.
        ELSE COALESCE((SELECT name FROM users WHERE id = $3), $3)
      END,
      $4, $5, $6, $7, $8, $9::jsonb, $10::jsonb
    )`;
  return { sql, params: [newId("aud"), actor.kind, actor.id, address, entry.action, targetKindOf(entry.action), entry.target.id, entry.target.name ?? null, before, after] };
}
