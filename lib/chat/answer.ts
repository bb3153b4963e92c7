import "server-only";
import type { Principal } from "@/lib/access/roles";
import { chatConfig } from "@/lib/config/chat";
import { createDownloadLink } from "@/lib/documents/files/download";
import { searchDocuments } from "@/lib/documents/search/search";
import { embeddingStatus } from "@/lib/embeddings";
import { log } from "@/lib/log";
import type { ChatEvent, ChatRequest, ChatSource } from "./contract";
import { ChatAbortedError, openChatStream, type ModelPiece } from "./model";
import { buildPrompt, excerpt, passageAnchor, passagesAnswer, relevantPassages } from "./prompt";

type SearchHit = Awaited<ReturnType<typeof searchDocuments>>["results"][number];

const NO_MATCH = "Nothing relevant was found: none of your organization's indexed documents has a passage that matches the question, so there is nothing to answer from. Index more documents or rephrase the question.";

/**
 * Answers a chat request as an NDJSON stream: retrieve the caller's passages
 * (row-level security limits them to the caller's organization), number
 * them, then stream the chat model's answer, or the passages themselves when
 * no chat model is configured.
 */
export async function answerChat(principal: Principal, request: ChatRequest, clientSignal: AbortSignal): Promise<Response> {
  const cfg = chatConfig();
  const embedding = embeddingStatus();
  if (!embedding.configured) {
    const notice = `The embedding provider is not configured (${embedding.reason ?? "no reason given"}), so documents cannot be searched. An administrator sets EMBEDDING_PROVIDER_CONFIG and restarts Quarry.`;
    return ndjsonResponse(
      fixedAnswer({ type: "sources", mode: "unavailable", model: null, embedding_model: null, notice, sources: [] }, notice),
    );
  }

  const question = request.messages[request.messages.length - 1].content.trim();
  // Hybrid: full-text ranks rescue exact terms (names, codes) that an embedding alone can rank low.
  const found = await searchDocuments(principal, { query: question, top_k: request.top_k ?? cfg.contextChunks, document_ids: request.document_ids, model: null, mode: "hybrid" });
  // Search answers only passages above the relevance floor (lib/documents/search/relevance.ts); of those the strong ones,
  // cited best first by the relevance each citation shows (the fused rank breaks ties).
  const relevant = relevantPassages(found.results).sort((a, b) => b.relevance - a.relevance || b.score - a.score);
  const sources = await toSources(principal, relevant, question);
  const head = (mode: "model" | "passages", notice: string | null): ChatEvent => ({
    type: "sources",
    mode,
    model: mode === "model" ? (cfg.model?.model ?? null) : null,
    embedding_model: found.model,
    notice,
    sources: sources.map((s) => s.source),
  });

  // Nothing relevant: say so plainly, with or without a chat model, rather than cite an unrelated passage.
  if (sources.length === 0) return ndjsonResponse(fixedAnswer(head(cfg.model ? "model" : "passages", "Nothing relevant was found."), NO_MATCH));
  if (!cfg.model) return ndjsonResponse(fixedAnswer(head("passages", "No chat model is configured: the answer lists the retrieved passages."), passagesAnswer(sources.map((s) => s.prompt), question)));

  // Aborted when the client goes away, so the model stops writing an answer nobody reads.
  const upstream = new AbortController();
  const abort = () => upstream.abort();
  clientSignal.addEventListener("abort", abort, { once: true });
  const prompt = buildPrompt(principal.orgName, request.messages, sources.map((s) => s.prompt));
  let pieces: AsyncIterable<ModelPiece>;
  try {
    pieces = await openChatStream(cfg.model, prompt, upstream.signal);
  } catch (error) {
    clientSignal.removeEventListener("abort", abort);
    throw error;
  }
  return ndjsonResponse(
    (async function* events(): AsyncGenerator<ChatEvent> {
      yield head("model", null);
      let finish: string | null = null;
      try {
        for await (const piece of pieces) {
          if (piece.kind === "text") yield { type: "delta", text: piece.text };
          else finish = piece.reason;
        }
        yield { type: "done", finish_reason: finish };
      } catch (error) {
        if (error instanceof ChatAbortedError) return;
        const detail = error instanceof Error ? error.message : String(error);
        log.warn("chat answer stopped", { orgId: principal.orgId, detail });
        yield { type: "error", detail: `The answer stopped: ${detail}` };
      } finally {
        clientSignal.removeEventListener("abort", abort);
      }
    })(),
    () => upstream.abort(),
  );
}

async function* fixedAnswer(head: ChatEvent, text: string): AsyncGenerator<ChatEvent> {
  yield head;
  yield { type: "delta", text };
  yield { type: "done", finish_reason: "stop" };
}

/** Numbered sources with a signed link per document (one link per document, shared by its passages). */
async function toSources(principal: Principal, hits: SearchHit[], question: string) {
  const links = new Map<string, Promise<{ url: string; expires_at: Date } | null>>();
  const linkFor = (documentId: string) => {
    if (!links.has(documentId)) {
      // A document deleted since the search has no file to link to; the passage is still worth showing.
      links.set(documentId, createDownloadLink(principal, documentId, "inline").catch(() => null));
    }
    return links.get(documentId)!;
  };
  return Promise.all(
    hits.map(async (hit, index) => {
      const link = await linkFor(hit.document_id);
      const n = index + 1;
      // The page (rows) of the best-matching passage inside the chunk, not the chunk's first page.
      const anchor = passageAnchor(hit);
      const source: ChatSource = {
        n,
        chunk_id: hit.chunk_id,
        document_id: hit.document_id,
        document_title: hit.document_title,
        filename: hit.filename,
        extension: hit.extension,
        ordinal: hit.ordinal,
        page: hit.page,
        rows: hit.rows,
        heading: hit.heading,
        page_start: hit.page_start,
        page_end: hit.page_end,
        row_start: hit.row_start,
        row_end: hit.row_end,
        // The relevance search shows (one scale in both modes, docs/search.md); the fused rank only orders the hits.
        score: hit.relevance,
        excerpt: excerpt(hit.text, 600, question),
        // The part that matched best, which the citation highlights (a page's or rows' text; the chunk without parts).
        passage: excerpt(hit.passage, 400, question),
        open_url: link ? `${link.url}${anchor}` : null,
        url_expires_at: link ? link.expires_at.toISOString() : null,
        download_endpoint: `/api/v1/documents/${encodeURIComponent(hit.document_id)}/download?disposition=inline`,
      };
      return { source, prompt: { ...hit, n } };
    }),
  );
}

/** One JSON object per line, flushed as each event is produced. */
function ndjsonResponse(events: AsyncGenerator<ChatEvent>, onCancel?: () => void): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await events.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(`${JSON.stringify(next.value)}\n`));
    },
    async cancel() {
      onCancel?.();
      await events.return(undefined);
    },
  });
  return new Response(body, {
    status: 200,
    headers: {
      "Content-Type": "application/x-ndjson; charset=utf-8",
      "Cache-Control": "no-store",
      // Reverse proxies (nginx) would otherwise hold the stream until it ends.
      "X-Accel-Buffering": "no",
    },
  });
}
