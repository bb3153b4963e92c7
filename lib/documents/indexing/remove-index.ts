import "server-only";
import type { Principal } from "@/lib/access/roles";
import { withTenant } from "@/lib/db/tenant";
import { notFound, conflict } from "@/lib/errors";
import { indexJobRunning } from "./index-document";
import { indexRemoved } from "./index-state";
import { toDocumentRecord } from "../document-record";

/**
 * Deletes every chunk of the document and clears its index fields; the
 * document goes back to `uploaded` (or `created` without a file). The
 * generation counter keeps counting, so a later index never reuses one.
 * Refused (409) while an indexing run owns the document; an abandoned run's
 * claim (past its lease) is cleared.
 */
export async function removeDocumentIndex(principal: Principal, documentId: string) {
  return withTenant(principal, async (tx) => {
    const rows = await tx.$queryRaw<{ index_job_started_at: Date | null; index_heartbeat_at: Date | null }[]>`
      SELECT index_job_started_at, index_heartbeat_at FROM documents WHERE id = ${documentId} FOR UPDATE`;
    if (rows.length === 0) throw notFound("Document");
    if (indexJobRunning(rows[0].index_job_started_at, rows[0].index_heartbeat_at)) throw conflict("This document is being indexed; remove its index once that run has finished");
    await tx.$executeRaw`DELETE FROM document_chunks WHERE document_id = ${documentId}`;
    await indexRemoved(tx, documentId);
    return toDocumentRecord(await tx.document.findUniqueOrThrow({ where: { id: documentId } }));
  });
}
