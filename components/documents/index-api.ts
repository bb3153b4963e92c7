import type { z } from "zod";
import { downloadDocument, getDocument, type DocumentRecord } from "@/lib/documents/contract";
import { EmbeddingConfig, indexDocument, removeDocumentIndex } from "@/lib/documents/indexing-contract";
import { searchDocuments, type SearchResponse } from "@/lib/documents/search-contract";
import { ApiClientError, callApi, errorFromResponse } from "@/components/api-client";

/** What GET …/documents/embedding-config answers, as the contract defines it. */
export type EmbeddingView = z.output<typeof EmbeddingConfig>;
export type SearchMode = SearchResponse["mode"];
export type SearchResultView = SearchResponse;

/**
 * Queues a document's indexing (`Prefer: respond-async`: 202 at once) and answers the record as it
 * now stands; the job runs on the server whether or not this page stays open, and the list follows
 * its state and progress.
 */
export async function startIndexing(documentId: string): Promise<DocumentRecord | null> {
  const res = await fetch(indexDocument.path.replace("{id}", encodeURIComponent(documentId)), {
    method: "POST",
    headers: { prefer: "respond-async" },
    cache: "no-store",
    credentials: "same-origin",
  });
  if (!res.ok) throw await errorFromResponse(res);
  return fetchRecord(documentId);
}

export async function removeIndex(documentId: string): Promise<void> {
  await callApi(removeDocumentIndex, { params: { id: documentId } });
}

/** The record, or null when it is gone (deleted meanwhile). */
export async function fetchRecord(documentId: string): Promise<DocumentRecord | null> {
  try {
    return await callApi(getDocument, { params: { id: documentId } });
  } catch (error) {
    if (error instanceof ApiClientError && error.status === 404) return null;
    throw error;
  }
}

export function searchPassages(query: string, mode: SearchMode, topK: number): Promise<SearchResultView> {
  return callApi(searchDocuments, { body: { query, mode, top_k: topK, document_ids: null, model: null } });
}

/** Opens a document's file in a new tab through a fresh inline signed URL, at `anchor` (passageAnchor: a PDF's page, a CSV's rows). */
export async function openDocument(documentId: string, anchor: string): Promise<void> {
  const { url } = await callApi(downloadDocument, { params: { id: documentId }, query: { disposition: "inline" } });
  const link = document.createElement("a");
  link.href = `${url}${anchor}`;
  link.target = "_blank";
  link.rel = "noopener";
  document.body.appendChild(link);
  link.click();
  link.remove();
}
