import type { z } from "zod";
import { createDocument, deleteDocument, DocumentRecord, downloadDocument, uploadDocument, type UploadConstraints } from "@/lib/documents/contract";
import { ApiClientError, callApi, endpointUrl } from "@/components/api-client";
import { sendWithProgress } from "@/components/upload-with-progress";
import { formatBytes } from "./format";

type Constraints = z.infer<typeof UploadConstraints>;

/** Why a file cannot be sent, checked in the browser before any byte leaves; null when it may go. */
export function precheckFile(file: File, constraints: Constraints): string | null {
  const dot = file.name.lastIndexOf(".");
  const extension = dot > 0 ? file.name.slice(dot + 1).toLowerCase() : "";
  if (!constraints.types.some((t) => t.extension === extension)) {
    return `${extension ? `.${extension}` : "Files without an extension"} cannot be uploaded; allowed: ${constraints.types.map((t) => `.${t.extension}`).join(", ")}`;
  }
  if (file.size === 0) return "The file is empty";
  if (file.size > constraints.max_bytes) return `The file is ${formatBytes(file.size)}; the limit is ${formatBytes(constraints.max_bytes)}`;
  return null;
}

/** Creates the record for `file`; throws ApiClientError with the API's detail. */
export function createRecord(file: File): Promise<DocumentRecord> {
  return callApi(createDocument, { body: { filename: file.name, ...(file.type ? { content_type: file.type } : {}) } });
}

/** Sends the file's bytes with upload progress (sendWithProgress). Resolves with the updated record. */
export function sendFile(documentId: string, file: File, onProgress: (fraction: number) => void): Promise<DocumentRecord> {
  return sendWithProgress(endpointUrl(uploadDocument, { params: { id: documentId } }), file, DocumentRecord, onProgress);
}

export async function requestDownloadUrl(documentId: string): Promise<string> {
  return (await callApi(downloadDocument, { params: { id: documentId } })).url;
}

/** Deletes the record; one already gone counts as deleted. */
export async function deleteRecord(documentId: string): Promise<void> {
  try {
    await callApi(deleteDocument, { params: { id: documentId } });
  } catch (error) {
    if (!(error instanceof ApiClientError && error.status === 404)) throw error;
  }
}
