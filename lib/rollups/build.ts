import "server-only";
import crypto from "node:crypto";
import { findOrganization } from "@/lib/auth/directory";
import { config } from "@/lib/config";
import { ownReaderTables } from "@/lib/db/own-tables";
import { type TenantTx, withTenant } from "@/lib/db/tenant";
import { SqlParams } from "@/lib/query/filters";
import { asJsonRows } from "@/lib/query/compile";
import { runReadOnly } from "@/lib/query/execute";
import type { RollupDefinition } from "@/lib/query/rollup-definition";
import { READ_BACK, type RollupTypes, dimensionKey, measureKey } from "@/lib/query/rollup-routing";
import { CURRENT_VERSION_SQL, declaredRollups, pruneRollups, rollupRefusal } from "./registry";

/**
 * Building and refreshing rollups (docs/rollups.md). A build reads the source aggregated by
 * (location, time bucket, dimensions) as the reader, under the same walls as a widget's statement
 * (the manifest's SQL never runs as the application role), then writes the rows as the application.
 *
 * Change detection, decided: the warehouse tables carry no updated_at, and a change to one order can
 * move it between days, channels or locations, so neither a watermark nor a per-day count + sum sees
 * every change. A refresh therefore re-reads the aggregate (one grouped scan, what one widget costs)
 * and fingerprints each time bucket's aggregated rows (md5 over the bucket's rows in a fixed order);
 * only buckets whose fingerprint is new, changed or gone are rewritten. Whether the rollup is fresh at
 * all is the warehouse change counter (migration 0036), checked on every query: exact, never "recent
 * enough".
 *
 * Bounded, decided: a rollup holds at most `config().rollups.maxRows` rows per organization
 * (QUARRY_ROLLUP_MAX_ROWS). The aggregate carries LIMIT cap + 1, so a build never has more than that
 * in memory, however many groups the declared dimensions make; one row past the cap marks the rollup
 * failed with the reason and the tables answer its widgets. Not an INSERT ... SELECT in the database:
 * the manifest's SQL runs only as the reader, in a read-only transaction, and the rows are
 * fingerprinted per bucket before they are written, so they pass through here, at most cap + 1.
 */

const STATEMENT_TIMEOUT_MS = 120_000;
const INSERT_CHUNK = 5_000;

export interface RefreshOutcome {
  id: string;
  name: string;
  /** `removed`: no dashboard uses it any more (pruneRollups); it is gone with its rows. */
  state: "ready" | "failed" | "skipped" | "removed";
  /** Buckets rewritten (new, changed or gone) and buckets in all. */
  bucketsWritten: number;
  buckets: number;
  rows: number;
  ms: number;
  error?: string;
}

/** The SQL type of each expression, as the source gives it (for reading the rows back as the same types). */
async function probeTypes(orgId: string, definition: RollupDefinition, timeZone: string): Promise<RollupTypes> {
  const dimensions = [definition.time.column, ...definition.dimensions];
  const text =
    `SELECT ${[...dimensions.map((_, i) => `pg_typeof(_s."c${i}")::text AS "c${i}"`), ...definition.measures.map((_, j) => `pg_typeof(_m."a${j}")::text AS "a${j}"`)].join(", ")}\n` +
    `FROM (SELECT 1) AS _one\n` +
    `LEFT JOIN (SELECT ${dimensions.map((c, i) => `${c} AS "c${i}"`).join(", ")} FROM ${definition.source} LIMIT 0) AS _s ON TRUE\n` +
    `CROSS JOIN (SELECT ${definition.measures.map((m, j) => `${m.expression} AS "a${j}"`).join(", ")} FROM ${definition.source} WHERE FALSE) AS _m`;
  // Through the same allow-list, name resolution and reader login as every user statement (pg_typeof is on the list).
  const [row] = (await runReadOnly({ orgId }, asJsonRows(text), [], { timeZone, statementTimeoutMs: STATEMENT_TIMEOUT_MS })) as Record<string, string>[];
  const readBack = (type: string, what: string) => {
    const cast = READ_BACK[type];
    if (!cast) throw new Error(`${what} is of type ${type}, which a rollup cannot hold exactly`);
    return cast;
  };
  return {
    time: readBack(row.c0, `time dimension ${definition.time.column}`),
    dimensions: Object.fromEntries(definition.dimensions.map((c, i) => [c, readBack(row[`c${i + 1}`], `dimension ${c}`)])),
    measures: Object.fromEntries(definition.measures.map((m, j) => [m.expression, readBack(row[`a${j}`], `measure ${m.expression}`)])),
  };
}

/** Why a rollup whose aggregate has more rows than the cap is not built (its state's error). */
export function overCapReason(maxRows: number): string {
  return `the aggregate has more than ${maxRows} rows: declare fewer or coarser dimensions`;
}

/**
 * The aggregate statement: one row per location, bucket and dimensions, as text so nothing passes
 * through a JavaScript number; at most `maxRows + 1` of them (one more than the cap tells it is over).
 */
export function aggregateStatement(definition: RollupDefinition, maxRows: number): { text: string; values: unknown[] } {
  const params = new SqlParams();
  const bucket = `date_trunc(${params.add(definition.time.grain, "text")}, ${definition.time.column})::date`;
  const location = definition.location ?? "NULL::text";
  const key = `jsonb_build_object(${definition.dimensions.map((c, i) => `'${dimensionKey(i)}', ${c}`).join(", ")})::text`;
  const measures = `jsonb_build_object(${definition.measures.map((m, j) => `'${measureKey(j)}', ${m.expression}`).join(", ")})::text`;
  const groupBy = [location === "NULL::text" ? null : location, bucket, ...definition.dimensions].filter((g) => g !== null);
  const inner = `SELECT ${location} AS l, ${bucket}::text AS b, ${key} AS k, ${measures} AS m\nFROM ${definition.source}\nGROUP BY ${groupBy.join(", ")}\nLIMIT ${params.add(maxRows + 1, "int")}`;
  return { text: asJsonRows(inner), values: params.values };
}

interface AggregateRow {
  l: string | null;
  b: string;
  k: string;
  m: string;
}

/** md5 of a bucket's rows in a fixed order: equal exactly when the bucket's aggregate is. */
function fingerprints(rows: readonly AggregateRow[]): Map<string, string> {
  const byBucket = new Map<string, string[]>();
  for (const row of rows) {
    const lines = byBucket.get(row.b) ?? [];
    lines.push(JSON.stringify([row.l, row.k, row.m]));
    byBucket.set(row.b, lines);
  }
  return new Map([...byBucket].map(([bucket, lines]) => [bucket, crypto.createHash("md5").update(lines.sort().join("\n")).digest("hex")]));
}

interface Read {
  id: string;
  definition: RollupDefinition;
  types: RollupTypes;
  rows: AggregateRow[];
  ms: number;
}

/**
 * Refreshes every rollup declared for the organization (the worker's job): those no dashboard uses any
 * more are removed, those still fresh skipped, and each stale one's aggregate is read (as the reader),
 * then all are written in one transaction. One
 * write matters on the embedded engine: each transaction writing rollup_rows makes the analytics
 * engines reload their copy of the data before the next widget statement.
 */
export async function refreshOrganizationRollups(orgId: string): Promise<RefreshOutcome[]> {
  const timeZone = (await findOrganization(orgId))?.timeZone ?? "UTC";
  const { maxRows } = config().rollups;
  // Rollups no dashboard uses any more are removed first, not refreshed.
  const removed = await pruneRollups(orgId);
  const declared = await declaredRollups({ orgId });
  const own = await ownReaderTables(orgId);
  // Read before the aggregates: rows written meanwhile make the counter move past it, so a rollup is stale, never wrong.
  const [{ version, fresh }] = await withTenant({ orgId }, (tx) =>
    tx.$queryRawUnsafe<{ version: string; fresh: string[] }[]>(
      `SELECT ${CURRENT_VERSION_SQL}::text AS version,
              array(SELECT id FROM rollups WHERE state = 'ready' AND built_version = ${CURRENT_VERSION_SQL} AND time_zone = $1) AS fresh`,
      timeZone,
    ),
  );
  const outcomes = new Map<string, RefreshOutcome>();
  const reads: Read[] = [];
  const failures: { id: string; name: string; message: string; ms: number }[] = [];
  for (const { id, definition } of declared) {
    const base = { id, name: definition.name, bucketsWritten: 0, buckets: 0, rows: 0 };
    // Before anything runs, and before a fresh one is skipped: a stored definition predating the scope rule
    // (or written past the save-time check) is marked failed and its rows go.
    const refusal = rollupRefusal(id, definition, own);
    if (refusal !== null) {
      failures.push({ id, name: definition.name, message: refusal, ms: 0 });
      continue;
    }
    if (fresh.includes(id)) {
      outcomes.set(id, { ...base, state: "skipped", ms: 0 });
      continue;
    }
    const started = performance.now();
    try {
      const statement = aggregateStatement(definition, maxRows);
      const rows = (await runReadOnly({ orgId }, statement.text, statement.values, { timeZone, statementTimeoutMs: STATEMENT_TIMEOUT_MS })) as unknown as AggregateRow[];
      if (rows.length > maxRows) throw new Error(overCapReason(maxRows));
      const types = await probeTypes(orgId, definition, timeZone);
      reads.push({ id, definition, types, rows, ms: performance.now() - started });
    } catch (error) {
      failures.push({ id, name: definition.name, message: error instanceof Error ? error.message : String(error), ms: performance.now() - started });
    }
  }
  if (reads.length > 0 || failures.length > 0) {
    await withTenant(
      { orgId },
      async (tx) => {
        for (const f of failures) {
          // Nothing reads a failed rollup, so its rows go (the next build that succeeds writes every bucket); not over a newer build's.
          await lockRollup(tx, f.id);
          const marked = await tx.$executeRaw`UPDATE rollups SET state = 'failed', error = ${f.message}, built_version = ${version}::bigint, row_count = NULL
                                              WHERE id = ${f.id} AND (built_version IS NULL OR built_version <= ${version}::bigint)`;
          if (marked > 0) {
            await tx.$executeRaw`DELETE FROM rollup_rows WHERE rollup_id = ${f.id}`;
            await tx.$executeRaw`DELETE FROM rollup_days WHERE rollup_id = ${f.id}`;
          }
          outcomes.set(f.id, { id: f.id, name: f.name, state: "failed", bucketsWritten: 0, buckets: 0, rows: 0, ms: f.ms, error: f.message });
        }
        for (const read of reads) {
          const started = performance.now();
          const written = await writeRollup(tx, orgId, read, version, timeZone);
          const base = { id: read.id, name: read.definition.name, buckets: written?.buckets ?? 0, rows: read.rows.length, ms: read.ms + performance.now() - started };
          outcomes.set(read.id, written ? { ...base, state: "ready", bucketsWritten: written.bucketsWritten } : { ...base, state: "skipped", bucketsWritten: 0 });
        }
      },
      { timeoutMs: STATEMENT_TIMEOUT_MS },
    );
  }
  return [...removed.map((r) => ({ ...r, state: "removed" as const, bucketsWritten: 0, buckets: 0, rows: 0, ms: 0 })), ...declared.map(({ id }) => outcomes.get(id)!)];
}

/** One write of a rollup at a time (a build's or a failure's), until the transaction ends; a later one finds the work done. */
async function lockRollup(tx: TenantTx, id: string): Promise<void> {
  await tx.$queryRaw`SELECT pg_advisory_xact_lock(hashtext('quarry.rollups'), hashtext(${id}))::text`;
}

/** Writes one rollup's read: only buckets whose aggregate changed are rewritten; null when a newer refresh wrote it already. */
async function writeRollup(tx: TenantTx, orgId: string, read: Read, version: string, timeZone: string): Promise<{ bucketsWritten: number; buckets: number } | null> {
  const { id, rows, types } = read;
  const next = fingerprints(rows);
  await lockRollup(tx, id);
  const [current] = await tx.$queryRaw<{ built_version: string | null; time_zone: string | null }[]>`SELECT built_version::text, time_zone FROM rollups WHERE id = ${id}`;
  if (!current) return null;
  if (current.built_version !== null && BigInt(current.built_version) > BigInt(version) && current.time_zone === timeZone) return null;
  // Days cut in another zone are other days: all of them are rewritten.
  const sameZone = current.time_zone === timeZone;
  const stored = sameZone ? await tx.$queryRaw<{ bucket: string; fingerprint: string }[]>`SELECT bucket::text, fingerprint FROM rollup_days WHERE rollup_id = ${id}` : [];
  const previous = new Map(stored.map((s) => [s.bucket, s.fingerprint]));
  const changed = [...next].filter(([bucket, print]) => previous.get(bucket) !== print).map(([bucket]) => bucket);
  const gone = [...previous.keys()].filter((bucket) => !next.has(bucket));
  const rewrite = [...changed, ...gone];
  if (!sameZone) {
    await tx.$executeRaw`DELETE FROM rollup_rows WHERE rollup_id = ${id}`;
    await tx.$executeRaw`DELETE FROM rollup_days WHERE rollup_id = ${id}`;
  } else if (rewrite.length > 0) {
    await tx.$executeRaw`DELETE FROM rollup_rows WHERE rollup_id = ${id} AND bucket = ANY (${rewrite}::date[])`;
    await tx.$executeRaw`DELETE FROM rollup_days WHERE rollup_id = ${id} AND bucket = ANY (${rewrite}::date[])`;
  }
  const wanted = new Set(changed);
  const inserts = rows.filter((r) => wanted.has(r.b));
  for (let i = 0; i < inserts.length; i += INSERT_CHUNK) {
    const chunk = JSON.stringify(inserts.slice(i, i + INSERT_CHUNK));
    await tx.$executeRaw`INSERT INTO rollup_rows (org_id, rollup_id, location_id, bucket, key, measures)
                         SELECT ${orgId}, ${id}, r->>'l', (r->>'b')::date, (r->>'k')::jsonb, (r->>'m')::jsonb FROM jsonb_array_elements(${chunk}::jsonb) AS r`;
  }
  if (changed.length > 0) {
    const days = JSON.stringify(changed.map((bucket) => ({ b: bucket, f: next.get(bucket) })));
    await tx.$executeRaw`INSERT INTO rollup_days (org_id, rollup_id, bucket, fingerprint)
                         SELECT ${orgId}, ${id}, (d->>'b')::date, d->>'f' FROM jsonb_array_elements(${days}::jsonb) AS d`;
  }
  await tx.$executeRaw`UPDATE rollups SET state = 'ready', error = NULL, column_types = ${JSON.stringify(types)}::jsonb, time_zone = ${timeZone},
                         built_version = ${version}::bigint, built_at = now(), row_count = ${rows.length} WHERE id = ${id}`;
  return { bucketsWritten: rewrite.length, buckets: next.size };
}
