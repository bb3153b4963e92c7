import "server-only";
import crypto from "node:crypto";
import type { Document } from "@/lib/db/generated/client";
import { embeddingStatus } from "@/lib/embeddings";
import type { DocumentStatus, IndexJobState } from "./contract";
import type { DocumentType } from "./file-types";

/**
 * Where a document's bytes live: `<prefix><org>/<document>/<version>`. Server
 * generated only, never from the client's file name; every upload gets a new
 * version, so a half-written upload can never overwrite the stored file.
 */
export function newStorageKey(prefix: string, orgId: string, documentId: string): string {
  return `${prefix}${orgId}/${documentId}/${Date.now().toString(36)}-${crypto.randomBytes(6).toString("hex")}`;
}

/** The API shape of a row (route shaping turns Dates into ISO strings and bigints into numbers). */
export function toDocumentRecord(row: Document) {
  return {
    id: row.id,
    org_id: row.orgId,
    title: row.title,
    description: row.description,
    tags: row.tags,
    filename: row.filename,
    content_type: row.contentType,
    extension: row.extension as DocumentType,
    size_bytes: row.sizeBytes === null ? null : Number(row.sizeBytes),
    checksum_sha256: row.checksumSha256,
    status: row.status as DocumentStatus,
    status_reason: row.statusReason,
    created_by: row.createdBy,
    uploaded_by: row.uploadedBy,
    uploaded_at: row.uploadedAt,
    index_model: row.indexModel,
    index_dims: row.indexDims,
    chunk_count: row.chunkCount,
    index_progress_done: row.indexProgressDone,
    index_progress_total: row.indexProgressTotal,
    index_generation: row.indexGeneration,
    indexed_at: row.indexedAt,
    index_stale: row.indexStale,
    index_model_stale: row.indexModel !== null && row.indexModel !== embeddingStatus().model,
    index_job: row.indexJobState
      ? {
          state: row.indexJobState as IndexJobState,
          attempts: row.indexAttempts,
          reason: row.indexJobReason,
          requested_at: row.indexRequestedAt,
          next_attempt_at: row.indexNextAttemptAt,
        }
      : null,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
