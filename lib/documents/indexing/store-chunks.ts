import "server-only";
import type { Principal } from "@/lib/access/roles";
import { type BulkTx, withTenantBulk } from "@/lib/db/bulk";
import { CHUNK_COPY_COLUMNS, ChunkCopyWriter, type ChunkCopyRow } from "./chunk-copy";
import { runProgressAddedSql } from "./index-state";
import { vectorLiteral } from "./vector-indexes";

/*
 * The SQL that stores an indexing run's chunks: a session's staging table filled by binary COPY,
 * then moved into document_chunks as the tenant role. The run itself (claim, embedding, schedule,
 * progress, swap) is index-document.ts.
 */

/** The indexing run a batch belongs to: its job id must still own the document when the batch commits. */
export interface OwningRun {
  id: string;
  documentId: string;
}

/**
 * Writes one batch with binary COPY (no vector printed or parsed as text) in one transaction on a
 * raw connection: COPY into a temporary table, then, as the tenant role, one INSERT … SELECT that
 * the row-level security policies check, so tenancy is still enforced by the database. The run's
 * progress advances by the rows in the same transaction; when the run no longer owns the document,
 * nothing commits and JobLostError says why.
 */
export async function storeChunks(principal: Principal, run: OwningRun, rows: ChunkCopyRow[]) {
  let copied: object | undefined;
  await withTenantBulk(
    principal,
    async (staging) => {
      if (!staging.copyBinary) return;
      const writer = new ChunkCopyWriter();
      for (const row of rows) writer.add(row);
      if (!stagingSessions.has(staging.session)) await staging.exec(CHUNK_STAGING_TABLE);
      await staging.copyBinary(`chunk_copy_staging (${CHUNK_COPY_COLUMNS.join(", ")})`, writer.finish());
      copied = staging.session;
    },
    async (tx) => {
      const columns = CHUNK_COPY_COLUMNS.join(", ");
      // The rows, on condition the job still owns the document (a read: it takes no lock), which
      // row-level security checks one by one; then the progress, in the same statement (one round
      // trip): the count of the rows moved is needed before the document's row is updated, so that
      // row is locked only for the commit and batches stored at the same time on other connections
      // do not queue behind it. The update decides: if the job lost the document meanwhile (deleted,
      // or taken over after its lease), nothing of this batch commits.
      let owned: number;
      if (copied) {
        owned = await tx.exec(
          `WITH moved AS (
            INSERT INTO document_chunks (${columns}) SELECT ${columns} FROM chunk_copy_staging
            WHERE EXISTS (SELECT FROM documents WHERE id = $1 AND index_job_id = $2) RETURNING 1)
          ${runProgressAddedSql("(SELECT count(*) FROM moved)")}`,
          [run.documentId, run.id],
        );
      } else {
        await insertAsText(tx, rows);
        owned = await tx.exec(runProgressAddedSql("$3"), [run.documentId, run.id, rows.length]);
      }
      if (owned === 0) {
        const exists = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM documents WHERE id = $1", [run.documentId]);
        throw new JobLostError(exists[0].n === 0);
      }
    },
  );
  // Created (if it was) in a transaction that has now committed: the session keeps the table.
  if (copied) stagingSessions.add(copied);
}

/** Sessions that hold chunk_copy_staging (each connection creates and grants it once). */
const stagingSessions = new WeakSet<object>();

/**
 * Where COPY is unavailable: one INSERT of the batch, vectors in pgvector's text form (the `pgvector`
 * package); the database computes the tsvectors (trigger, migration 0020).
 */
export async function insertAsText(tx: BulkTx, rows: ChunkCopyRow[]) {
  const params: unknown[] = [];
  const columns = CHUNK_COPY_COLUMNS.filter((c) => c !== "tsv");
  const tuples = rows.map((r) => {
    const values = [r.orgId, r.documentId, r.generation, r.ordinal, r.text, r.wordStart, r.wordEnd, r.pageStart, r.pageEnd, r.rowStart, r.rowEnd, r.model, r.embedding.length, vectorLiteral(Array.from(r.embedding))];
    const at = params.length;
    params.push(...values);
    return `(${values.map((_, i) => `$${at + i + 1}${i === values.length - 1 ? "::vector" : ""}`).join(", ")})`;
  });
  await tx.exec(`INSERT INTO document_chunks (${columns.join(", ")}) VALUES ${tuples.join(", ")}`, params);
}

/**
 * Per session, emptied at each commit; the tenant role only reads it, to move the rows. Created
 * once per session (a GRANT on every batch was a catalog write each time). A row up to a page long
 * stays whole in the row (toast_tuple_target): moving its values out of line here, only to read them
 * back for the insert, was a third of the staging COPY's time in PGlite. Longer values go out of
 * line uncompressed, as in document_chunks (migration 0022): a value compressed here would reach
 * the chunk compressed, and the compression is the cost that migration removed.
 */
export const CHUNK_STAGING_TABLE = `CREATE TEMP TABLE IF NOT EXISTS chunk_copy_staging (
  org_id text, document_id text, generation int, ordinal int, text text, word_start int, word_end int,
  page_start int, page_end int, row_start int, row_end int, model text, dims int, embedding vector, tsv tsvector)
  WITH (toast_tuple_target = 8160) ON COMMIT DELETE ROWS;
  ALTER TABLE chunk_copy_staging ALTER COLUMN text SET STORAGE EXTERNAL, ALTER COLUMN tsv SET STORAGE EXTERNAL;
  GRANT SELECT ON chunk_copy_staging TO quarry_app`;

/** The document was deleted, or another run took it over after this one's lease expired. */
export class JobLostError extends Error {
  constructor(readonly deleted: boolean) {
    super(deleted ? "the document was deleted while it was being indexed" : "another indexing run took the document over");
  }
}
