import "server-only";
import crypto from "node:crypto";
import { type TenantScope, type TenantTx, withTenant } from "@/lib/db/tenant";
import { type RollupDefinition, rollupContent } from "@/lib/query/rollup-definition";
import type { BuiltRollup, RollupTypes } from "@/lib/query/rollup-routing";
import { type OwnRollupTables, rollupScopeProblems } from "@/lib/query/rollup-scope";
import { type OwnReaderTables, ownReaderTables } from "@/lib/db/own-tables";

/**
 * The rollups of an organization (table `rollups`, migration 0036): which are declared, built, and
 * fresh. Identity is content: the same definition in two dashboards is one row and one build.
 */

/** A definition's id: a hash of its content (the name is only a label). */
export function rollupId(definition: RollupDefinition): string {
  return `rlp_${crypto.createHash("sha256").update(rollupContent(definition)).digest("hex").slice(0, 24)}`;
}

/** Declaring and pruning an organization's rollups take turns (a transaction-scoped advisory lock). */
async function lockDeclarations(tx: TenantTx, orgId: string): Promise<void> {
  await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtext('quarry.rollups.declare'), hashtext(${orgId}))::text`;
}

/**
 * Declares rollups for an organization, in the caller's tenant transaction (a published version's,
 * with the version, which records the ids returned): new ones are pending until the worker builds
 * them. Holds the organization's declaration lock until that transaction ends, so a prune running
 * meanwhile waits and then sees the version that declares them.
 */
export async function declareRollups(tx: TenantTx, orgId: string, definitions: readonly RollupDefinition[]): Promise<string[]> {
  const ids = definitions.map(rollupId);
  if (ids.length > 0) await lockDeclarations(tx, orgId);
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
  error: string | null;
  column_types: RollupTypes | null;
  time_zone: string | null;
  built_version: string | null;
  row_count: number | null;
  current_version: string;
}

const refusals = new Map<string, string | null>();

/**
 * Why a stored definition may not be built or answer (lib/query/rollup-scope.ts), or null: checked again on
 * every read, so a rollup declared before the rule, or written past the save-time check, is never used.
 * `own`: the organization's own tables, which a source may read (their columns and location policies are
 * part of the answer). Memoized by id (a hash of the content) and the own tables' stamp.
 */
export function rollupRefusal(id: string, definition: RollupDefinition, own: OwnRollupTables & Pick<OwnReaderTables, "stamp">): string | null {
  const key = own.columns.size === 0 ? id : `${own.stamp}\0${id}`;
  let refusal = refusals.get(key);
  if (refusal === undefined) {
    const problems = rollupScopeProblems(definition, own);
    refusal = problems.length > 0 ? `refused: ${problems.map((p) => p.message).join("; ")}` : null;
    if (refusals.size >= 1_000) refusals.delete(refusals.keys().next().value as string);
    refusals.set(key, refusal);
  }
  return refusal;
}

/** The warehouse's change counter for the transaction's organization (0 before its first write). */
export const CURRENT_VERSION_SQL = "(SELECT coalesce(max(version), 0) FROM warehouse_versions)";

/** The warehouse's change counter for `orgId` now: every write to its tables (demo warehouse or loaded) bumps it. */
export async function currentWarehouseVersion(orgId: string): Promise<string> {
  const [row] = await withTenant({ orgId }, (tx) => tx.$queryRawUnsafe<{ version: string }[]>(`SELECT ${CURRENT_VERSION_SQL}::text AS version`));
  return row.version;
}

/**
 * Of `definitions`, the rollups built at the warehouse's current version (or `atVersion`, the one a request was
 * keyed by) in `timeZone` (the days a
 * rollup was cut in must be the days its widgets' date filters mean) that may answer `scope`, and the
 * ids of those declared but not fresh (never built, or built before the warehouse last changed): the
 * caller asks the worker to refresh them. Definitions never declared are neither.
 *
 * A caller limited to some locations is answered only by rollups with a location dimension (its rows
 * are those of its locations, migration 0040); a rollup without one is not offered to it, and the tables
 * answer under row-level security.
 */
export async function freshRollups(
  scope: TenantScope,
  definitions: readonly RollupDefinition[],
  timeZone: string,
  atVersion?: string,
): Promise<{ fresh: BuiltRollup[]; stale: string[] }> {
  const fresh: BuiltRollup[] = [];
  const stale: string[] = [];
  const own = await ownReaderTables(scope.orgId);
  for (const read of await registryRows(scope.orgId, definitions)) {
    // A request keyed by the version it read first is answered at that version, so its cached answer matches its key.
    const row = atVersion === undefined ? read : { ...read, current_version: atVersion };
    const built = asFresh(row, timeZone, own);
    if (built) {
      if (answersScope(built, scope)) fresh.push(built);
    } else if (row.state !== "failed" || row.built_version !== read.current_version) stale.push(row.id);
  }
  return { fresh, stale };
}

/** A location-scoped caller is answered from a rollup only through its location dimension (issue 41 §4). */
export function answersScope(built: BuiltRollup, scope: TenantScope): boolean {
  return (scope.locationIds?.length ?? 0) === 0 || built.definition.location !== null;
}

async function registryRows(orgId: string, definitions: readonly RollupDefinition[]): Promise<RegistryRow[]> {
  if (definitions.length === 0) return [];
  const ids = [...new Set(definitions.map(rollupId))];
  return withTenant({ orgId }, (tx) =>
    tx.$queryRawUnsafe<RegistryRow[]>(
      `SELECT id, name, definition, state, error, column_types, time_zone, built_version::text, row_count, ${CURRENT_VERSION_SQL}::text AS current_version
         FROM rollups WHERE id = ANY ($1::text[])`,
      ids,
    ),
  );
}

/** The rollup as routing reads it when it is built at the warehouse's current version in `timeZone` and passes the scope rule; otherwise null (the tables answer). */
function asFresh(row: RegistryRow, timeZone: string, own: OwnReaderTables): BuiltRollup | null {
  if (row.state === "ready" && row.built_version === row.current_version && row.time_zone === timeZone && row.column_types && rollupRefusal(row.id, row.definition, own) === null) {
    return { id: row.id, name: row.name, definition: row.definition, types: row.column_types, rowCount: row.row_count ?? 0 };
  }
  return null;
}

/**
 * Where a rollup stands for the widgets that could read it: `ready` (built and fresh: it answers),
 * `building` (declared and waiting for the worker: never built, or built before the warehouse last
 * changed or in another time zone; the next query asks for it), `failed` (its last build failed, with
 * the reason), `not_built` (not declared: a draft's rollups are declared when it is published).
 */
export type RollupState = { state: "ready"; rollup: BuiltRollup } | { state: "building" } | { state: "failed"; error: string } | { state: "not_built" };

/** The state of each of `definitions` (by rollupId) in `timeZone`: what freshRollups decides, with the reasons it does not tell. */
export async function rollupStates(orgId: string, definitions: readonly RollupDefinition[], timeZone: string): Promise<Map<string, RollupState>> {
  const rows = new Map((await registryRows(orgId, definitions)).map((row) => [row.id, row]));
  const own = await ownReaderTables(orgId);
  const states = new Map<string, RollupState>();
  for (const definition of definitions) {
    const id = rollupId(definition);
    const row = rows.get(id);
    const built = row ? asFresh(row, timeZone, own) : null;
    states.set(
      id,
      !row
        ? { state: "not_built" }
        : built
          ? { state: "ready", rollup: built }
          : row.state === "failed" || rollupRefusal(row.id, row.definition, own) !== null
            ? { state: "failed", error: rollupRefusal(row.id, row.definition, own) ?? row.error ?? "the build failed" }
            : { state: "building" },
    );
  }
  return states;
}

/** Every rollup declared for an organization (the worker refreshes them all). */
export async function declaredRollups(scope: TenantScope): Promise<{ id: string; definition: RollupDefinition }[]> {
  return withTenant(scope, (tx) => tx.$queryRaw<{ id: string; definition: RollupDefinition }[]>`SELECT id, definition FROM rollups ORDER BY id`);
}

/**
 * Removes the organization's rollups that no dashboard still uses, with their days and rows (the
 * foreign keys cascade): used are those a dashboard's published version declares, or a version a
 * live embed pins. Nothing is removed while a used version's rollups are unrecorded (published
 * before migration 0038 and not yet recorded at boot). Returns what was removed.
 */
export async function pruneRollups(orgId: string): Promise<{ id: string; name: string }[]> {
  return withTenant({ orgId }, async (tx) => {
    await lockDeclarations(tx, orgId);
    // This statement's snapshot is taken after the lock: a version published meanwhile has committed.
    return tx.$queryRaw<{ id: string; name: string }[]>`
      WITH used AS (
        SELECT v.rollup_ids FROM dashboards d JOIN dashboard_versions v ON v.dashboard_id = d.id AND v.version = d.published_version
        UNION ALL
        SELECT v.rollup_ids FROM dashboard_embeds e JOIN dashboard_versions v ON v.dashboard_id = e.dashboard_id AND v.version = e.version
         WHERE e.revoked_at IS NULL AND e.expires_at > now()
      )
      DELETE FROM rollups r
       WHERE NOT EXISTS (SELECT 1 FROM used WHERE used.rollup_ids IS NULL)
         AND NOT EXISTS (SELECT 1 FROM used WHERE r.id = ANY (used.rollup_ids))
      RETURNING id, name`;
  });
}
