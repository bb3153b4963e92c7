import type { z } from "zod";
import type { DocumentRecord, UploadConstraints } from "@/lib/documents/contract";
import { errorDetail, formatBytes } from "./format";

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

async function jsonOrNull(res: Response): Promise<unknown> {
  try {
    return await res.json();
  } catch {
    return null;
  }
}

/** Creates the record for `file`; throws an Error with the API's detail. */
export async function createRecord(file: File): Promise<DocumentRecord> {
  const res = await fetch("/api/v1/documents", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ filename: file.name, ...(file.type ? { content_type: file.type } : {}) }),
  });
  const body = await jsonOrNull(res);
  if (!res.ok) throw new Error(errorDetail(body, `Could not create the document (HTTP ${res.status})`));
  return body as DocumentRecord;
}

/**
 * Sends the file's bytes with XMLHttpRequest, whose upload events (unlike
 * fetch's) report real progress. Resolves with the updated record.
 */
export function sendFile(documentId: string, file: File, onProgress: (fraction: number) => void): Promise<DocumentRecord> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `/api/v1/documents/${encodeURIComponent(documentId)}/upload`);
    xhr.setRequestHeader("content-type", file.type || "application/octet-stream");
    xhr.responseType = "json";
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve(xhr.response as DocumentRecord);
      else reject(new Error(errorDetail(xhr.response, `Upload failed (HTTP ${xhr.status})`)));
    };
    xhr.onerror = () => reject(new Error("The connection failed during the upload; nothing was stored"));
    xhr.onabort = () => reject(new Error("Upload cancelled"));
    xhr.send(file);
  });
}

export async function requestDownloadUrl(documentId: string): Promise<string> {
  const res = await fetch(`/api/v1/documents/${encodeURIComponent(documentId)}/download`);
  const body = await jsonOrNull(res);
  if (!res.ok) throw new Error(errorDetail(body, `Download failed (HTTP ${res.status})`));
  return (body as { url: string }).url;
}

export async function deleteRecord(documentId: string): Promise<void> {
  const res = await fetch(`/api/v1/documents/${encodeURIComponent(documentId)}`, { method: "DELETE" });
  if (!res.ok && res.status !== 404) throw new Error(errorDetail(await jsonOrNull(res), `Delete failed (HTTP ${res.status})`));
}
