import type { DocumentRecord } from "@/lib/documents/contract";
import { errorDetail } from "./format";

/** The part of GET /api/v1/documents/embedding-config the page uses (clients ignore unknown fields, SPEC §9.4). */
export interface EmbeddingView {
  provider: string;
  model: string;
  dims: number;
  configured: boolean;
  reason: string | null;
}

export type SearchMode = "vector" | "hybrid";

export interface SearchHitView {
  chunk_id: string;
  document_id: string;
  document_title: string;
  filename: string;
  extension: string;
  ordinal: number;
  /** vector mode: cosine similarity; hybrid mode: the fused rank score. */
  score: number;
  /** Cosine similarity in both modes. */
  similarity?: number;
  text: string;
  page_start: number | null;
  page_end: number | null;
  row_start: number | null;
  row_end: number | null;
}

export interface SearchResultView {
  model: string;
  mode: SearchMode;
  results: SearchHitView[];
}

async function jsonOrNull(res: Response): Promise<unknown> {
  try {
    return await res.json();
  } catch {
    return null;
  }
}

/** Error for a failed call, worded for people: the API's detail, or what the status means. */
async function failure(res: Response, action: string): Promise<Error> {
  const body = await jsonOrNull(res);
  if (res.status === 429) return new Error(`Too many requests; try again in ${res.headers.get("retry-after") ?? "a few"} seconds`);
  return new Error(errorDetail(body, `${action} failed (HTTP ${res.status})`));
}

/**
 * Indexes a document. The request lasts as long as the indexing does and
 * resolves with the finished record; progress is read from the record meanwhile.
 */
export async function startIndexing(documentId: string): Promise<DocumentRecord> {
  const res = await fetch(`/api/v1/documents/${encodeURIComponent(documentId)}/index`, { method: "POST" });
  if (!res.ok) throw await failure(res, "Indexing");
  return (await res.json()) as DocumentRecord;
}

export async function removeIndex(documentId: string): Promise<void> {
  const res = await fetch(`/api/v1/documents/${encodeURIComponent(documentId)}/index`, { method: "DELETE" });
  if (!res.ok) throw await failure(res, "Removing the index");
}

export async function fetchRecord(documentId: string): Promise<DocumentRecord | null> {
  const res = await fetch(`/api/v1/documents/${encodeURIComponent(documentId)}`, { cache: "no-store" });
  return res.ok ? ((await res.json()) as DocumentRecord) : null;
}

export async function searchPassages(query: string, mode: SearchMode, topK: number): Promise<SearchResultView> {
  const res = await fetch("/api/v1/documents/search", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query, mode, top_k: topK, document_ids: null, model: null }),
  });
  if (!res.ok) throw await failure(res, "Search");
  return (await res.json()) as SearchResultView;
}

/** Opens a document's file in a new tab through a fresh inline signed URL; PDFs jump to `page`. */
export async function openDocument(documentId: string, filename: string, page: number | null): Promise<void> {
  const res = await fetch(`/api/v1/documents/${encodeURIComponent(documentId)}/download?disposition=inline`, { cache: "no-store" });
  const body = await jsonOrNull(res);
  if (!res.ok) throw new Error(errorDetail(body, `Opening the document failed (HTTP ${res.status})`));
  const link = document.createElement("a");
  link.href = `${(body as { url: string }).url}${page !== null && filename.toLowerCase().endsWith(".pdf") ? `#page=${page}` : ""}`;
  link.target = "_blank";
  link.rel = "noopener";
  document.body.appendChild(link);
  link.click();
  link.remove();
}
