import { z } from "zod";
import { defineEndpoint } from "@/lib/endpoint";
import { pageOf, pageQuery } from "@/lib/pagination";
import { DOCUMENT_EXTENSIONS } from "./file-types";

export const DocumentStatus = z
  .enum(["created", "uploaded", "indexing", "indexed", "failed"])
  .describe("created: record only; uploaded: file stored; indexing/indexed/failed: search index state")
  .meta({ id: "DocumentStatus" });
export type DocumentStatus = z.infer<typeof DocumentStatus>;

export const IndexJobState = z
  .enum(["queued", "running", "done", "failed"])
  .describe("queued: waiting for a worker (or for its next attempt); running: a worker is indexing; done: the request was indexed; failed: given up (dead letter), with the reason")
  .meta({ id: "IndexJobState" });
export type IndexJobState = z.infer<typeof IndexJobState>;

export const DocumentTypeSchema = z.enum(DOCUMENT_EXTENSIONS as ["pdf", "docx", "txt", "csv"]).meta({ id: "DocumentType" });

/**
 * The document record. Index fields are written by the indexer; the issue-7
 * code may extend this object (additive fields, SPEC §9.4).
 */
export const DocumentRecord = z
  .object({
    id: z.string(),
    org_id: z.string(),
    title: z.string(),
    description: z.string(),
    tags: z.array(z.string()),
    filename: z.string().describe("Display name of the uploaded file, sanitized; not a storage path"),
    content_type: z.string(),
    extension: DocumentTypeSchema,
    size_bytes: z.number().int().nullable().describe("null until a file is uploaded"),
    checksum_sha256: z.string().nullable().describe("Hex SHA-256 of the stored bytes; null until uploaded"),
    status: DocumentStatus,
    status_reason: z.string().nullable(),
    created_by: z.string(),
    uploaded_by: z.string().nullable(),
    uploaded_at: z.iso.datetime().nullable(),
    index_model: z.string().nullable(),
    index_dims: z.number().int().nullable(),
    chunk_count: z.number().int(),
    index_progress_done: z.number().int(),
    index_progress_total: z.number().int(),
    index_generation: z.number().int(),
    indexed_at: z.iso.datetime().nullable(),
    index_stale: z.boolean().describe("The file was replaced after indexing; re-index to search the new content"),
    index_model_stale: z.boolean().describe("Indexed with another model than the active one; re-index to search it with the active model"),
    index_job: z
      .object({
        state: IndexJobState,
        attempts: z.number().int().describe("Attempts made for the current request"),
        reason: z.string().nullable().describe("Why the last attempt failed (failed: why it was given up), or why it waits"),
        requested_at: z.iso.datetime().nullable(),
        next_attempt_at: z.iso.datetime().nullable().describe("When a failed attempt is tried again"),
      })
      .nullable()
      .describe("The indexing job of the document; null when indexing was never requested"),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: "Document" });
export type DocumentRecord = z.infer<typeof DocumentRecord>;

const Tag = z
  .string()
  .trim()
  .min(1, "Tags cannot be empty")
  .max(50, "Tags are at most 50 characters")
  .transform((t) => t.toLowerCase());

export const CreateDocumentBody = z
  .object({
    filename: z.string().min(1).max(1000).describe("Name of the file to be uploaded; its extension decides the type (pdf, docx, txt, csv)"),
    title: z.string().trim().max(300).optional().describe("Defaults to the file name without its extension"),
    description: z.string().max(5000).default(""),
    tags: z
      .array(Tag)
      .max(20, "At most 20 tags")
      .default([])
      .transform((tags) => [...new Set(tags)]),
    content_type: z.string().max(200).optional().describe("Declared media type; must fit the extension when given"),
  })
  .meta({ id: "CreateDocument" });

export const IdParams = z.object({ id: z.string().min(1).max(100) });

export const ListDocumentsQuery = pageQuery.extend({
  status: DocumentStatus.optional(),
  type: DocumentTypeSchema.optional().describe("File type (extension)"),
  q: z.string().trim().max(200).optional().describe("Text contained in the title or file name (case-insensitive)"),
  tag: z.string().trim().toLowerCase().max(50).optional(),
});

export const DocumentList = pageOf(DocumentRecord).meta({ id: "DocumentList" });

export const UploadConstraints = z
  .object({
    max_bytes: z.number().int(),
    types: z.array(
      z.object({
        extension: DocumentTypeSchema,
        label: z.string(),
        content_type: z.string().describe("The type stored and served for this extension"),
        accepted_content_types: z.array(z.string()).describe("Declared types that fit (application/octet-stream always does)"),
      }),
    ),
    accept: z.string().describe("Value for an <input type=file accept=...> attribute"),
    upload: z.object({
      method: z.literal("POST"),
      path: z.string(),
      body: z.string(),
    }),
  })
  .meta({ id: "UploadConstraints" });

export const UploadQuery = z.object({
  filename: z.string().min(1).max(1000).optional().describe("New file name (replaces the record's); its extension may change the type"),
  index: z
    .enum(["true", "false"])
    .optional()
    .transform((v) => (v === undefined ? undefined : v === "true"))
    .describe("Queue the file's indexing: `true` or `false` (store the file only, to index it later with POST …/index); omitted, the organization's setting index_on_upload decides (default true)"),
});

export const DownloadLink = z
  .object({
    url: z.url().describe("Signed, short-lived URL of the file"),
    expires_at: z.iso.datetime(),
    filename: z.string(),
    content_type: z.string(),
    size_bytes: z.number().int(),
    checksum_sha256: z.string(),
  })
  .meta({ id: "DownloadLink" });

export const SignedFileQuery = z.object({
  key: z.string(),
  org: z.string(),
  name: z.string(),
  type: z.string(),
  expires: z.string(),
  disposition: z.enum(["attachment", "inline"]).optional(),
  sig: z.string(),
});

export const DownloadQuery = z.object({
  disposition: z
    .enum(["attachment", "inline"])
    .default("attachment")
    .describe("inline: the browser shows the file where it can (PDF viewer, text) instead of saving it; citations use it to open a PDF at its page"),
});

const TAGS = ["Documents"];

export const getUploadConstraints = defineEndpoint({
  method: "get",
  path: "/api/v1/documents/upload-constraints",
  summary: "File types and size limit for uploads",
  tags: TAGS,
  access: "user",
  response: UploadConstraints,
});

export const createDocument = defineEndpoint({
  method: "post",
  path: "/api/v1/documents",
  summary: "Create a document record (then upload its file)",
  tags: TAGS,
  access: "admin",
  body: CreateDocumentBody,
  response: DocumentRecord,
  status: 201,
  errors: [415],
});

export const listDocuments = defineEndpoint({
  method: "get",
  path: "/api/v1/documents",
  summary: "List the organization's documents",
  description: "Newest first; filters by status, type and text in the title or file name.",
  tags: TAGS,
  access: "user",
  query: ListDocumentsQuery,
  response: DocumentList,
});

export const getDocument = defineEndpoint({
  method: "get",
  path: "/api/v1/documents/{id}",
  summary: "One document record",
  tags: TAGS,
  access: "user",
  params: IdParams,
  response: DocumentRecord,
  errors: [404],
});

export const uploadDocument = defineEndpoint({
  method: "post",
  path: "/api/v1/documents/{id}/upload",
  summary: "Upload (or replace) the document's file",
  description:
    "The request body is the file's bytes (not multipart), streamed to storage. Content-Type may be the file's type or " +
    "application/octet-stream; the bytes are checked against the extension. Replacing a file marks an existing index stale. " +
    "Concurrent uploads to one record: the last to finish wins; each response describes the file it stored.",
  tags: TAGS,
  access: "admin",
  params: IdParams,
  query: UploadQuery,
  rawBody: true,
  response: DocumentRecord,
  errors: [400, 404, 413, 415],
});

export const downloadDocument = defineEndpoint({
  method: "get",
  path: "/api/v1/documents/{id}/download",
  summary: "A signed, short-lived download URL",
  tags: TAGS,
  access: "user",
  params: IdParams,
  query: DownloadQuery,
  response: DownloadLink,
  errors: [404, 409],
});

export const signedFile = defineEndpoint({
  method: "get",
  path: "/api/v1/documents/signed-file",
  summary: "The file behind a signed download URL (local storage)",
  description: "Served only for URLs from the download endpoint: the signature covers key, organization, name and expiry.",
  tags: TAGS,
  access: "public",
  query: SignedFileQuery,
  produces: "application/octet-stream",
  errors: [403, 404, 410],
});

export const deleteDocument = defineEndpoint({
  method: "delete",
  path: "/api/v1/documents/{id}",
  summary: "Delete a document: record, stored file and index",
  tags: TAGS,
  access: "admin",
  params: IdParams,
  status: 204,
  errors: [404],
});
