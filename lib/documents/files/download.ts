import "server-only";
import { Readable } from "node:stream";
import type { z } from "zod";
import type { Principal } from "@/lib/access/roles";
import { config } from "@/lib/config";
import { documentStorageConfig } from "@/lib/config/storage";
import { withTenant } from "@/lib/db/tenant";
import { Forbidden, Gone, notFound, conflict } from "@/lib/errors";
import { verifyLocalDownload } from "@/lib/storage/local-signed-url";
import { contentDisposition, isObjectNotFound, type Disposition } from "@/lib/storage/object-storage";
import { objectStorage } from "@/lib/storage/provider";
import type { SignedFileQuery } from "../contract";

/** A signed URL for the document's current file, valid for DOCUMENT_DOWNLOAD_URL_TTL_SECONDS (local URLs start with QUARRY_PUBLIC_URL). */
export async function createDownloadLink(principal: Principal, id: string, disposition: Disposition = "attachment") {
  const row = await withTenant(principal, (tx) => tx.document.findUnique({ where: { id } }));
  if (!row) throw notFound("Document");
  if (!row.storageKey || row.sizeBytes === null || !row.checksumSha256) throw conflict("No file has been uploaded for this document yet");
  const ttl = documentStorageConfig().downloadUrlTtlSeconds;
  const expiresAt = new Date(Date.now() + ttl * 1000);
  // The configured public URL, not the request's origin: Next reports 127.0.0.1 as localhost, and proxies rewrite hosts.
  const appOrigin = config().publicUrl.replace(/\/+$/, "");
  const url = await objectStorage().signedDownloadUrl(row.storageKey, { filename: row.filename, contentType: row.contentType, expiresInSeconds: ttl, appOrigin, disposition });
  return { url, expires_at: expiresAt, filename: row.filename, content_type: row.contentType, size_bytes: Number(row.sizeBytes), checksum_sha256: row.checksumSha256 };
}

/**
 * The file behind a signed local URL. The signature names the organization;
 * the object must still be that organization's current file of a document
 * (looked up under its row-level security), so replaced or deleted files are gone.
 */
export async function openSignedFile(query: z.output<typeof SignedFileQuery>): Promise<Response> {
  const cfg = documentStorageConfig();
  if (cfg.storage.provider !== "local") throw notFound("File");
  const check = verifyLocalDownload(query, cfg.storage.prefix);
  if (!check.ok) {
    throw check.reason === "expired" ? new Gone("This download link has expired; request a new one") : new Forbidden("This download link is not valid");
  }
  const { grant } = check;
  const current = await withTenant({ orgId: grant.orgId }, (tx) => tx.document.findFirst({ where: { storageKey: grant.key }, select: { id: true } }));
  if (!current) throw notFound("File");
  try {
    const object = await objectStorage().get(grant.key);
    return new Response(Readable.toWeb(object.body) as ReadableStream<Uint8Array>, {
      headers: {
        "Content-Type": grant.contentType,
        "Content-Length": String(object.size),
        "Content-Disposition": contentDisposition(grant.filename, grant.disposition),
        "Cache-Control": "private, no-store",
        "X-Content-Type-Options": "nosniff",
      },
    });
  } catch (error) {
    if (isObjectNotFound(error)) throw notFound("File");
    throw error;
  }
}
