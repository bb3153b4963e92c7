import "server-only";
import { getDb } from "@/lib/db/client";
import { type TenantTx, withTenant } from "@/lib/db/tenant";
import { dashboardRollups } from "@/lib/query/rollup-definition";
import { rollupId } from "@/lib/rollups/registry";
import { parseManifest } from "./manifest";
import { withOwnTables } from "@/lib/db/own-tables";

/**
 * Which rollups each dashboard version declared (`dashboard_versions.rollup_ids`, migration 0038): the
 * rollup worker keeps those a published version (or a live embed's) declares and removes the rest
 * (lib/rollups/registry.ts pruneRollups).
 */

/** Records the rollups a version declared, in its publishing transaction. */
export async function recordVersionRollups(tx: TenantTx, dashboardId: string, version: number, ids: readonly string[]): Promise<void> {
  await tx.$executeRaw`UPDATE dashboard_versions SET rollup_ids = ${[...ids]}::text[] WHERE dashboard_id = ${dashboardId} AND version = ${version}`;
}

/**
 * Records, from their manifests, the rollups of versions published before migration 0038 (whose
 * rollup_ids is NULL); until an organization's are recorded, its rollups are never removed. A manifest
 * that no longer validates declares none (its dashboard cannot be shown from it either). Idempotent:
 * boot runs it. Returns how many versions it recorded.
 */
export async function recordUnrecordedVersionRollups(): Promise<number> {
  const { system } = await getDb();
  const organizations = await system.query<{ id: string }>("SELECT id FROM organizations ORDER BY id");
  let recorded = 0;
  for (const { id: orgId } of organizations) {
    // Within the organization's own tables (issue 42): a version over a loaded table validates as it did when published.
    recorded += await withOwnTables(orgId, () => withTenant({ orgId }, async (tx) => {
      const versions = await tx.$queryRaw<{ dashboard_id: string; version: number; spec_yaml: string }[]>`
        SELECT dashboard_id, version, spec_yaml FROM dashboard_versions WHERE rollup_ids IS NULL`;
      for (const v of versions) {
        const parsed = parseManifest(v.spec_yaml);
        const ids = parsed.ok ? dashboardRollups(parsed.value.datasets.values()).map(rollupId) : [];
        await recordVersionRollups(tx, v.dashboard_id, v.version, ids);
      }
      return versions.length;
    }));
  }
  return recorded;
}
