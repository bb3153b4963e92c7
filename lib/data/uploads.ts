import "server-only";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { Principal } from "@/lib/access/roles";
import { config } from "@/lib/config";
import { documentStorageConfig } from "@/lib/config/storage";
import { Malformed, NotFound, TooLarge, Invalid } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { isObjectTooLarge, type ListedObject } from "@/lib/storage/object-storage";
import { objectStorage } from "@/lib/storage/provider";
import { TypeInference, columnIdentifiers, listSheets, openRowSource, type ColumnType, type RowSource, type SourceFormat } from "./formats";
import { sourceLimits } from "./limits";
import { type LoadReport, type LoadRequest, loadTable } from "./load";

/*
 * A file uploaded to load (docs/data.md "Uploads"): the raw request body streamed to object storage
 * (as a document's file is) under the organization's key, never held whole; read once over every row
 * for the preview (types inferred over the whole file), and again, streamed, by the load. An upload
 * is kept QUARRY_DATA_UPLOAD_TTL_HOURS (loaded or not; expireUploads, the worker's upkeep, removes it
 * then); its description sits beside it as a small JSON object, so an upload needs no table of its
 * own. Another organization's id finds nothing: keys carry the organization.
 */
/** Rows a preview shows. */
export const PREVIEW_ROWS = 20;

interface UploadMeta {
  id: string;
  filename: string;
  format: SourceFormat;
  bytes: number;
  expiresAt: string;
}

export interface ReadOptions {
  delimiter?: string;
  encoding?: string;
  sheet?: string;
}

export interface UploadPreview {
  id: string;
  filename: string;
  format: SourceFormat;
  bytes: number;
  sheets: string[] | null;
  sheet: string | null;
  delimiter: string | null;
  encoding: string | null;
  header: string[];
  names: string[];
  types: ColumnType[];
  rows: (string | null)[][];
  row_count: number;
  expires_at: string;
}

const ID = /^upl_[0-9a-f]{24}$/;
/** The folder of every organization's uploads. */
const uploadsFolder = () => `${documentStorageConfig().storage.prefix}data-uploads/`;
const objectKey = (orgId: string, id: string) => `${uploadsFolder()}${orgId}/${id}`;
/** An upload's file or description under uploadsFolder(): the organization, the id, ".json" for the description. */
const UPLOAD_OBJECT = /^([^/]+)\/(upl_[0-9a-f]{24})(\.json)?$/;
const metaKey = (orgId: string, id: string) => `${objectKey(orgId, id)}.json`;

export interface UploadBody {
  body: ReadableStream<Uint8Array> | null;
  declaredLength: number | null;
}

/** Stores the request body as an upload and answers its preview. */
export async function createUpload(principal: Principal, request: UploadBody, options: ReadOptions & { filename: string; format: SourceFormat }): Promise<UploadPreview> {
  const limits = sourceLimits();
  if (request.declaredLength !== null && request.declaredLength > limits.maxBytes) throw tooLarge(limits.maxBytes);
  if (!request.body || request.declaredLength === 0) throw emptyFile();
  const id = newId("upl");
  const storage = objectStorage();
  const source = Readable.fromWeb(request.body as WebReadableStream<Uint8Array>);
  try {
    await storage.putStream(objectKey(principal.orgId, id), source, { contentType: "application/octet-stream", maxBytes: limits.maxBytes });
  } catch (error) {
    if (isObjectTooLarge(error)) throw tooLarge(limits.maxBytes);
    throw new Malformed("The upload was interrupted before the whole file arrived; nothing was stored, send it again");
  }
  const { size } = await storage.get(objectKey(principal.orgId, id)).then((object) => (object.body.destroy(), object));
  if (size === 0) {
    await storage.delete(objectKey(principal.orgId, id));
    throw emptyFile();
  }
  const meta: UploadMeta = { id, filename: options.filename, format: options.format, bytes: size, expiresAt: new Date(Date.now() + config().data.uploadTtlMs).toISOString() };
  await storage.putStream(metaKey(principal.orgId, id), Readable.from([Buffer.from(JSON.stringify(meta))]), { contentType: "application/json", maxBytes: 64 * 1024 });
  try {
    return await preview(principal, meta, options);
  } catch (error) {
    // A file that cannot be read as rows is not kept: nothing could load it.
    await removeUpload(principal, id);
    throw error;
  }
}

/** The upload read again (another sheet, delimiter or encoding). */
export async function previewUpload(principal: Principal, id: string, options: ReadOptions): Promise<UploadPreview> {
  return preview(principal, await uploadMeta(principal, id), options);
}

/** Loads an upload into a table (loadTable's request, the upload's file as the source). */
export async function loadUpload(principal: Principal, uploadId: string, request: LoadRequest, options: ReadOptions): Promise<LoadReport> {
  const meta = await uploadMeta(principal, uploadId);
  const source = await openUpload(principal, meta, options);
  try {
    return await loadTable(principal, { ...request, actor: principal }, source);
  } finally {
    // A load refused before it read every row leaves the rest of the file: release it.
    await (source.rows as AsyncGenerator).return?.(undefined);
  }
}

export async function removeUpload(principal: Pick<Principal, "orgId">, id: string): Promise<void> {
  const storage = objectStorage();
  // The description first: a request meanwhile finds no upload (404), never a description without its file.
  await storage.delete(metaKey(principal.orgId, id));
  await storage.delete(objectKey(principal.orgId, id));
}

/**
 * The worker's upkeep (the data tick, every minute): removes every upload made longer than QUARRY_DATA_UPLOAD_TTL_HOURS
 * before `now`, loaded or not, in every organization. An upload's age is its description's (written when its file
 * had arrived whole), or its file's when it has none (a process that died between the two writes). Objects under
 * the folder that are no upload's are left alone. Answers how many uploads it removed.
 */
export async function expireUploads(now: Date): Promise<number> {
  const folder = uploadsFolder();
  const cutoff = now.getTime() - config().data.uploadTtlMs;
  const uploads = new Map<string, { orgId: string; id: string; file?: ListedObject; meta?: ListedObject }>();
  for await (const object of objectStorage().list(folder)) {
    const match = UPLOAD_OBJECT.exec(object.key.slice(folder.length));
    if (!match) continue;
    const [, orgId, id, json] = match;
    const upload = uploads.get(`${orgId}/${id}`) ?? { orgId, id };
    if (json) upload.meta = object;
    else upload.file = object;
    uploads.set(`${orgId}/${id}`, upload);
  }
  let removed = 0;
  for (const upload of uploads.values()) {
    const madeAt = (upload.meta ?? upload.file)!.lastModified.getTime();
    if (madeAt >= cutoff) continue;
    await removeUpload({ orgId: upload.orgId }, upload.id);
    removed++;
  }
  return removed;
}

async function uploadMeta(principal: Principal, id: string): Promise<UploadMeta> {
  const missing = new NotFound(`Upload "${id}" not found (uploads are kept ${config().data.uploadTtlMs / 3_600_000} hours)`);
  if (!ID.test(id)) throw missing;
  let meta: UploadMeta;
  try {
    const object = await objectStorage().get(metaKey(principal.orgId, id));
    const chunks: Buffer[] = [];
    for await (const chunk of object.body) chunks.push(chunk as Buffer);
    meta = JSON.parse(Buffer.concat(chunks).toString("utf8")) as UploadMeta;
  } catch {
    throw missing;
  }
  if (Date.parse(meta.expiresAt) < Date.now()) {
    await removeUpload(principal, id);
    throw missing;
  }
  return meta;
}

async function openUpload(principal: Principal, meta: UploadMeta, options: ReadOptions): Promise<RowSource> {
  const object = await objectStorage().get(objectKey(principal.orgId, meta.id));
  return openRowSource(object.body, { format: meta.format, delimiter: options.delimiter, encoding: options.encoding, sheet: options.sheet, limits: sourceLimits() });
}

/** Reads every row once: the first PREVIEW_ROWS kept, every value seen by the type inference. */
async function preview(principal: Principal, meta: UploadMeta, options: ReadOptions): Promise<UploadPreview> {
  const sheets = meta.format === "xlsx" ? await listSheets((await objectStorage().get(objectKey(principal.orgId, meta.id))).body, { maxBytes: sourceLimits().maxBytes }) : null;
  const source = await openUpload(principal, meta, options);
  const inference = new TypeInference(source.header.length);
  const rows: (string | null)[][] = [];
  let count = 0;
  for await (const row of source.rows) {
    inference.observe(row);
    if (rows.length < PREVIEW_ROWS) rows.push(row);
    count++;
  }
  if (source.header.length === 0) throw new Invalid([{ loc: ["body"], msg: "The file has no columns", type: "no_header" }]);
  return {
    id: meta.id,
    filename: meta.filename,
    format: meta.format,
    bytes: meta.bytes,
    sheets,
    sheet: meta.format === "xlsx" ? (options.sheet ?? sheets?.[0] ?? null) : null,
    delimiter: meta.format === "csv" ? (options.delimiter ?? null) : null,
    encoding: meta.format === "csv" ? (options.encoding ?? "utf-8") : null,
    header: source.header,
    names: columnIdentifiers(source.header),
    types: inference.result(),
    rows,
    row_count: count,
    expires_at: meta.expiresAt,
  };
}

function tooLarge(maxBytes: number) {
  return new TooLarge(`The file is larger than the limit of ${maxBytes} bytes (QUARRY_DATA_MAX_BYTES)`);
}

function emptyFile() {
  return new Invalid([{ loc: ["body"], msg: "The file is empty (0 bytes)", type: "empty_file" }]);
}
