import "server-only";
import crypto from "node:crypto";
import { type TenantScope, type TenantTx, withTenant } from "@/lib/db/tenant";
import { type RollupDefinition, rollupContent } from "@/lib/query/rollup-definition";
import type { BuiltRollup, RollupTypes } from "@/lib/query/rollup-routing";

/**
 * The rollups of an organization (table `rollups`, migration 0036): which are declared, built, and
 * fresh. Identity is content: the same definition in two dashboards is one row and one build.
 */

/** A definition's id: a hash of its content (the name is only a label). */
export function rollupId(definition: RollupDefinition): string {
  return `rlp_${crypto.createHash("sha256").update(rollupContent(definition)).digest("hex").slice(0, 24)}`;
}

/**
 * Declares rollups for an organization, in the caller's tenant transaction (a published version's,
 * with the version): new ones are pending until the worker builds them.
 */
export async function declareRollups(tx: TenantTx, orgId: string, definitions: readonly RollupDefinition[]): Promise<string[]> {
  const ids = definitions.map(rollupId);
  for (const [i, definition] of definitions.entries()) {
    await tx.$executeRaw`INSERT INTO rollups (org_id, id, name, definition) VALUES (${orgId}, ${ids[i]}, ${definition.name}, ${JSON.stringify(definition)}::jsonb)
                         ON CONFLICT (org_id, id) DO NOTHING`;
  }
  return ids;
}

interface RegistryRow {
  id: string;
  name: string;
  definition: RollupDefinition;
  state: string;
  column_types: RollupTypes | null;
  time_zone: string | null;
  built_version: string | null;
  row_count: number | null;
  current_version: string;
}

/** The warehouse's change counter for the transaction's organization (0 before its first write). */
export const CURRENT_VERSION_SQL = "(SELECT coalesce(max(version), 0) FROM warehouse_versions)";

/**
 * Of `definitions`, the rollups built at the warehouse's current version in `timeZone` (the days a
 * rollup was cut in must be the days its widgets' date filters mean), and the ids of those declared
 * but not fresh (never built, or built before the warehouse last changed): the caller asks the worker
 * to refresh them. Definitions never declared are neither.
 */
export async function freshRollups(orgId: string, definitions: readonly RollupDefinition[], timeZone: string): Promise<{ fresh: BuiltRollup[]; stale: string[] }> {
  if (definitions.length === 0) return { fresh: [], stale: [] };
  const ids = [...new Set(definitions.map(rollupId))];
  const rows = await withTenant({ orgId }, (tx) =>
    tx.$queryRawUnsafe<RegistryRow[]>(
      `SELECT id, name, definition, state, column_types, time_zone, built_version::text, row_count, ${CURRENT_VERSION_SQL}::text AS current_version
         FROM rollups WHERE id = ANY ($1::text[])`,
      ids,
    ),
  );
  const fresh: BuiltRollup[] = [];
  const stale: string[] = [];
  for (const row of rows) {
    if (row.state === "ready" && row.built_version === row.current_version && row.time_zone === timeZone && row.column_types) {
      fresh.push({ id: row.id, name: row.name, definition: row.definition, types: row.column_types, rowCount: row.row_count ?? 0 });
    } else if (row.state !== "failed" || row.built_version !== row.current_version) {
      stale.push(row.id);
    }
  }
  return { fresh, stale };
}

/** Every rollup declared for an organization (the worker refreshes them all). */
export async function declaredRollups(scope: TenantScope): Promise<{ id: string; definition: RollupDefinition }[]> {
  return withTenant(scope, (tx) => tx.$queryRaw<{ id: string; definition: RollupDefinition }[]>`SELECT id, definition FROM rollups ORDER BY id`);
}
