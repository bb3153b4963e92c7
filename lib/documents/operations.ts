import "server-only";
import { defineOperation } from "@/lib/operation";
import * as contract from "./contract";
import * as documents from "./files/documents";
import { createDownloadLink, openSignedFile } from "./files/download";
import * as embeddingConfig from "./indexing/embedding-config";
import * as indexJobs from "./indexing/index-jobs";
import { toJsonValue } from "@/lib/json";
import { removeDocumentIndex as removeIndex } from "./indexing/remove-index";
import * as search from "./search/search";
import * as indexingContract from "./indexing-contract";
import * as searchContract from "./search-contract";
import { uploadDocumentFile } from "./files/upload";

export const getUploadConstraints = defineOperation(contract.getUploadConstraints, async () => documents.uploadConstraints());

export const createDocument = defineOperation(contract.createDocument, ({ principal, body }) => documents.createDocument(principal, body));

export const listDocuments = defineOperation(contract.listDocuments, ({ principal, query }) => documents.listDocuments(principal, query));

export const getDocument = defineOperation(contract.getDocument, ({ principal, params }) => documents.getDocument(principal, params.id));

export const uploadDocument = defineOperation(contract.uploadDocument, async ({ req, principal, params, query }) => {
  // The file is the raw request body, streamed: there is no upload without HTTP.
  if (!req) throw new Error("uploadDocument streams the HTTP request body; serve it with route()");
  const length = req.headers.get("content-length");
  return uploadDocumentFile(principal, params.id, {
    body: req.body,
    declaredType: req.headers.get("content-type"),
    declaredLength: length !== null && /^\d+$/.test(length) ? Number(length) : null,
    filename: query.filename,
    index: query.index,
  });
});

export const downloadDocument = defineOperation(contract.downloadDocument, ({ principal, params, query }) => createDownloadLink(principal, params.id, query.disposition));

export const signedFile = defineOperation(contract.signedFile, ({ query }) => openSignedFile(query));

export const deleteDocument = defineOperation(contract.deleteDocument, ({ principal, params }) => documents.deleteDocument(principal, params.id));

export const indexDocument = defineOperation(indexingContract.indexDocument, async ({ principal, params, query, req, signal }) => {
  // RFC 7240: `Prefer: respond-async` queues the job and answers 202 with where to follow it.
  if (req && /(^|[,;\s])respond-async\b/i.test(req.headers.get("prefer") ?? "")) {
    await indexJobs.requestIndex(principal, params.id, { model: query.model ?? null });
    const status = await indexJobs.getIndexStatus(principal, params.id);
    return Response.json(indexingContract.IndexStatus.parse(toJsonValue(status)), {
      status: 202,
      headers: { Location: status.links.status, "Preference-Applied": "respond-async" },
    });
  }
  return indexJobs.indexAndWait(principal, params.id, { model: query.model ?? null, signal });
});

export const getIndexStatus = defineOperation(indexingContract.getIndexStatus, ({ principal, params }) => indexJobs.getIndexStatus(principal, params.id));

export const removeDocumentIndex = defineOperation(indexingContract.removeDocumentIndex, ({ principal, params }) => removeIndex(principal, params.id));

export const searchDocuments = defineOperation(searchContract.searchDocuments, ({ principal, body }) => search.searchDocuments(principal, body));

export const getEmbeddingConfig = defineOperation(indexingContract.getEmbeddingConfig, ({ principal }) => embeddingConfig.getEmbeddingConfig(principal));
