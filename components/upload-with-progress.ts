import type { z } from "zod";
import { ApiClientError } from "@/components/api-client";

/**
 * Sends a file as the raw request body with XMLHttpRequest, whose upload events (unlike fetch's)
 * report real progress, and parses the answer with `schema`. Rejects with ApiClientError carrying the
 * API's detail (and Retry-After). The documents' and the data tables' uploads both go through it.
 */
export function sendWithProgress<S extends z.ZodType>(
  url: string,
  file: Blob,
  schema: S,
  onProgress: (fraction: number) => void,
  options: { contentType?: string; signal?: AbortSignal } = {},
): Promise<z.output<S>> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", url);
    xhr.setRequestHeader("content-type", options.contentType || file.type || "application/octet-stream");
    xhr.responseType = "json";
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    xhr.onload = () => {
      const body = xhr.response as { detail?: unknown } | null;
      if (xhr.status < 200 || xhr.status >= 300) return reject(new ApiClientError(xhr.status, body?.detail ?? null, Number(xhr.getResponseHeader("retry-after")) || null));
      const parsed = schema.safeParse(body);
      if (parsed.success) resolve(parsed.data);
      else reject(new ApiClientError(xhr.status, "The upload answered an unexpected shape"));
    };
    xhr.onerror = () => reject(new ApiClientError(0, "The connection failed during the upload; nothing was stored"));
    xhr.onabort = () => reject(new ApiClientError(0, "Upload cancelled"));
    options.signal?.addEventListener("abort", () => xhr.abort(), { once: true });
    xhr.send(file);
  });
}
