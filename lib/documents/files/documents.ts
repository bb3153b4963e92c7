import "server-only";
import type { z } from "zod";
import type { Principal } from "@/lib/access/roles";
import { documentStorageConfig } from "@/lib/config/storage";
import { withTenant } from "@/lib/db/tenant";
import { pageBody, pageWindow } from "@/lib/pagination";
import type { Prisma } from "@/lib/db/generated/client";
import { UnsupportedType, notFound, unprocessable } from "@/lib/errors";
import { log } from "@/lib/log";
import { newId } from "@/lib/ids";
import { objectStorage } from "@/lib/storage/provider";
import type { CreateDocumentBody, ListDocumentsQuery } from "../contract";
import { DOCUMENT_EXTENSIONS, DOCUMENT_TYPES, allowedTypesText, declaredTypeFits, extensionOf, isDocumentType, sanitizeFilename, type DocumentType } from "../file-types";
import { toDocumentRecord } from "../document-record";

/** Types and size limit an upload must meet, for clients to check before sending. */
export function uploadConstraints() {
  const types = DOCUMENT_EXTENSIONS.map((extension) => ({
    extension,
    label: DOCUMENT_TYPES[extension].label,
    content_type: DOCUMENT_TYPES[extension].contentType,
    accepted_content_types: [...DOCUMENT_TYPES[extension].aliases],
  }));
  return {
    max_bytes: documentStorageConfig().maxBytes,
    types,
    accept: [...DOCUMENT_EXTENSIONS.map((e) => `.${e}`), ...new Set(DOCUMENT_EXTENSIONS.map((e) => DOCUMENT_TYPES[e].contentType))].join(","),
    upload: { method: "POST" as const, path: "/api/v1/documents/{id}/upload", body: "the file's raw bytes (not multipart); optional ?filename=" },
  };
}

/**
 * A display file name and its type, or an error a client can act on:
 * 422 when nothing of the name is left, 415 for other types or a declared
 * content type that contradicts the extension.
 */
export function resolveFileName(raw: string, declaredType: string | null | undefined, loc: (string | number)[]): { filename: string; type: DocumentType } {
  const filename = sanitizeFilename(raw);
  if (!filename) throw unprocessable([{ loc, msg: "The file name has no usable characters", type: "value_error" }]);
  const extension = extensionOf(filename);
  if (!isDocumentType(extension)) {
    throw new UnsupportedType(`Files of type ${extension ? `.${extension}` : "(no extension)"} are not accepted; allowed: ${allowedTypesText()}`);
  }
  if (!declaredTypeFits(extension, declaredType)) {
    throw new UnsupportedType(`Content type '${declaredType}' does not match a .${extension} file (expected ${DOCUMENT_TYPES[extension].contentType})`);
  }
  return { filename, type: extension };
}

export async function createDocument(principal: Principal, body: z.output<typeof CreateDocumentBody>) {
  const { filename, type } = resolveFileName(body.filename, body.content_type, ["body", "filename"]);
  const title = body.title || filename.slice(0, filename.length - type.length - 1) || filename;
  const row = await withTenant(principal, (tx) =>
    tx.document.create({
      data: {
        id: newId("doc"),
        orgId: principal.orgId,
        title,
        description: body.description,
        tags: body.tags,
        filename,
        contentType: DOCUMENT_TYPES[type].contentType,
        extension: type,
        createdBy: principal.userId,
      },
    }),
  );
  return toDocumentRecord(row);
}

export async function listDocuments(principal: Principal, query: z.output<typeof ListDocumentsQuery>) {
  // Prisma passes `contains` into LIKE unescaped; a user's % or _ means the character itself.
  const text = query.q?.replace(/[\\%_]/g, "\\$&");
  const where: Prisma.DocumentWhereInput = {
    ...(query.status ? { status: query.status } : {}),
    ...(query.type ? { extension: query.type } : {}),
    ...(query.tag ? { tags: { has: query.tag } } : {}),
    ...(text
      ? { OR: [{ title: { contains: text, mode: "insensitive" } }, { filename: { contains: text, mode: "insensitive" } }] }
      : {}),
  };
  const [rows, total] = await withTenant(principal, (tx) =>
    Promise.all([
      tx.document.findMany({ where, orderBy: [{ createdAt: "desc" }, { id: "desc" }], ...pageWindow(query) }),
      tx.document.count({ where }),
    ]),
  );
  return pageBody(rows.map(toDocumentRecord), total, query);
}

export async function getDocument(principal: Principal, id: string) {
  const row = await withTenant(principal, (tx) => tx.document.findUnique({ where: { id } }));
  if (!row) throw notFound("Document");
  return toDocumentRecord(row);
}

/**
 * Deletes the record (its index chunks go with it by foreign-key cascade),
 * then the stored file. A file that cannot be deleted is logged, not
 * resurrected: the record is what makes it reachable.
 */
export async function deleteDocument(principal: Principal, id: string): Promise<void> {
  const deleted = await withTenant(principal, async (tx) => {
    const row = await tx.document.findUnique({ where: { id }, select: { storageKey: true } });
    if (!row) return null;
    await tx.document.delete({ where: { id } });
    return row;
  });
  if (!deleted) throw notFound("Document");
  if (deleted.storageKey) {
    await objectStorage()
      .delete(deleted.storageKey)
      .catch((error: unknown) => log.warn("stored file of a deleted document was not removed", { documentId: id, error: String(error) }));
  }
}
