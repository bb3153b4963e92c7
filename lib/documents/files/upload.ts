import "server-only";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { Principal } from "@/lib/access/roles";
import { documentStorageConfig } from "@/lib/config/storage";
import { withTenant } from "@/lib/db/tenant";
import { Malformed, TooLarge, UnsupportedType, notFound, unprocessable } from "@/lib/errors";
import { log } from "@/lib/log";
import { isObjectTooLarge } from "@/lib/storage/object-storage";
import { objectStorage } from "@/lib/storage/provider";
import { ContentInspector, ContentMismatchError, EmptyContentError, IncompleteBodyError } from "./content-inspector";
import { resolveFileName } from "./documents";
import { DOCUMENT_TYPES } from "../file-types";
import { indexJobRunning } from "../indexing/index-document";
import { sendIndexJob } from "../indexing/index-jobs";
import { fileReplaced, requestRecorded } from "../indexing/index-state";
import { newId } from "@/lib/ids";
import { indexOnUpload } from "@/lib/organizations/settings";
import { newStorageKey, toDocumentRecord } from "../document-record";

export interface UploadRequest {
  body: ReadableStream<Uint8Array> | null;
  /** Content-Type header as sent. */
  declaredType: string | null;
  /** Content-Length header as sent, when any. */
  declaredLength: number | null;
  /** `?filename=`: replaces the record's file name (and may change its type). */
  filename?: string;
  /** Queue the file's indexing (`?index=`); undefined: the organization's setting (index_on_upload, default true). */
  index?: boolean;
}

/**
 * Streams an upload into storage under a fresh key while hashing and
 * checking it, then points the record at it in one short transaction. Until
 * that commit the record keeps its previous file and status, so a dropped
 * connection, an oversize or a lying file changes nothing visible. Concurrent
 * uploads each store their own object; the last commit wins and removes the
 * object it replaced.
 */
export async function uploadDocumentFile(principal: Principal, id: string, request: UploadRequest) {
  const cfg = documentStorageConfig();
  const current = await withTenant(principal, (tx) => tx.document.findUnique({ where: { id }, select: { filename: true } }));
  if (!current) throw notFound("Document");
  const { filename, type } = resolveFileName(request.filename ?? current.filename, request.declaredType, ["query", "filename"]);
  if (request.declaredLength !== null && request.declaredLength > cfg.maxBytes) throw tooLarge(cfg.maxBytes);
  if (!request.body || request.declaredLength === 0) throw emptyFile();

  const storage = objectStorage();
  const key = newStorageKey(cfg.storage.prefix, principal.orgId, id);
  const inspector = new ContentInspector(type, request.declaredLength);
  const source = Readable.fromWeb(request.body as WebReadableStream<Uint8Array>);
  let sourceError: unknown = null;
  source.on("error", (error) => {
    sourceError = error;
    inspector.destroy(error);
  });
  // The storage write reports the inspector's errors; this listener only keeps a late duplicate from being "unhandled".
  inspector.on("error", () => undefined);
  // pipe, not pipeline: a refused file must not tear down the request (see drainRefusedBody).
  source.pipe(inspector);
  try {
    await storage.putStream(key, inspector, { contentType: DOCUMENT_TYPES[type].contentType, maxBytes: cfg.maxBytes });
  } catch (error) {
    const failure = uploadFailure(error, sourceError, cfg.maxBytes);
    if (failure instanceof TooLarge) source.destroy();
    else if (!sourceError) drainRefusedBody(source, cfg.maxBytes);
    throw failure;
  }

  const requestId = newId("idx");
  let autoIndex = false;
  const committed = await withTenant(principal, async (tx) => {
    autoIndex = request.index ?? (await indexOnUpload(tx));
    // Row lock: concurrent commits to one document apply one after the other.
    const locked = await tx.$queryRaw<
      { storage_key: string | null; status: string; chunk_count: number; index_stale: boolean; index_job_started_at: Date | null; index_heartbeat_at: Date | null }[]
    >`SELECT storage_key, status, chunk_count, index_stale, index_job_started_at, index_heartbeat_at FROM documents WHERE id = ${id} FOR UPDATE`;
    if (locked.length === 0) return null;
    const previous = locked[0];
    const running = indexJobRunning(previous.index_job_started_at, previous.index_heartbeat_at);
    // The index request is committed with the file: a crash before its job is sent loses nothing (the sweep sends it).
    if (autoIndex) await requestRecorded(tx, id, { id: requestId, model: null, runLive: running });
    const row = await tx.document.update({
      where: { id },
      data: {
        filename,
        extension: type,
        contentType: DOCUMENT_TYPES[type].contentType,
        sizeBytes: BigInt(inspector.size),
        checksumSha256: inspector.sha256,
        storageKey: key,
        ...fileReplaced(previous, running),
        uploadedBy: principal.userId,
        uploadedAt: new Date(),
      },
    });
    return { row, previousKey: previous.storage_key };
  });
  if (!committed) {
    // Deleted while the bytes were streaming: drop what was just stored.
    await storage.delete(key).catch(() => undefined);
    throw notFound("Document");
  }
  if (autoIndex) await sendIndexJob({ orgId: principal.orgId, documentId: id, requestId });
  if (committed.previousKey && committed.previousKey !== key) {
    await storage
      .delete(committed.previousKey)
      .catch((error: unknown) => log.warn("replaced document file was not removed", { documentId: id, error: String(error) }));
  }
  return toDocumentRecord(committed.row);
}

function tooLarge(maxBytes: number) {
  return new TooLarge(`The file is larger than the limit of ${maxBytes} bytes (${(maxBytes / 1024 / 1024).toFixed(0)} MiB)`);
}

function emptyFile() {
  return unprocessable([{ loc: ["body"], msg: "The file is empty (0 bytes)", type: "empty_file" }]);
}

/** The caller's view of a failed upload: what was wrong with the file, or that the connection broke. */
function uploadFailure(error: unknown, sourceError: unknown, maxBytes: number): unknown {
  if (error instanceof ContentMismatchError) return new UnsupportedType(error.message);
  if (isObjectTooLarge(error)) return tooLarge(maxBytes);
  if (error instanceof EmptyContentError) return emptyFile();
  if (sourceError || error instanceof IncompleteBodyError) {
    return new Malformed("The upload was interrupted before the whole file arrived; nothing was stored, send it again");
  }
  return error;
}

/**
 * Reads and discards the rest of a refused upload (at most the size limit), so
 * the client, still sending, gets the error response instead of a reset
 * connection. Oversized uploads are cut off instead.
 */
function drainRefusedBody(source: Readable, maxBytes: number) {
  let drained = 0;
  source.unpipe();
  source.on("data", (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > maxBytes) source.destroy();
  });
  source.resume();
}
