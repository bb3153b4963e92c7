"use client";

import { useState, type FormEvent } from "react";
import { excerpt, passageAnchor, passageLabel } from "@/lib/chat/prompt";
import { useEmbeddingConfig } from "@/components/api-hooks";
import { Highlighted } from "./highlight";
import { openDocument, searchPassages, type EmbeddingView, type SearchMode, type SearchResultView } from "./index-api";
import styles from "./documents.module.css";

const MODES: { value: SearchMode; label: string; hint: string }[] = [
  { value: "vector", label: "Vector", hint: "Ranks passages by embedding similarity (cosine)" },
  { value: "hybrid", label: "Hybrid", hint: "Fuses embedding similarity with full-text keyword ranking" },
];

const percent = (score: number) => `${(score * 100).toFixed(score >= 0.995 || score < 0.1 ? 1 : 0)}%`;

/** Search across the organization's indexed documents: query, mode, passages with score, position and a link to the file. */
export function SearchPanel({ embedding: initialEmbedding }: { embedding: EmbeddingView }) {
  const embedding = useEmbeddingConfig(initialEmbedding).data ?? initialEmbedding;
  const [query, setQuery] = useState("");
  const [mode, setMode] = useState<SearchMode>("vector");
  const [topK, setTopK] = useState(5);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<(SearchResultView & { query: string }) | null>(null);
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());

  async function submit(event: FormEvent) {
    event.preventDefault();
    const text = query.trim();
    if (!text) return;
    setBusy(true);
    setError(null);
    try {
      setResult({ ...(await searchPassages(text, mode, topK)), query: text });
      setExpanded(new Set());
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  }

  async function open(hit: SearchResultView["results"][number]) {
    setError(null);
    try {
      await openDocument(hit.document_id, passageAnchor({ ...hit, page: hit.page ?? hit.page_start }));
    } catch (e) {
      setError((e as Error).message);
    }
  }

  if (!embedding.configured) {
    return (
      <section aria-label="Search documents" className="card" data-testid="search-panel">
        <h2 className={styles.panelTitle}>Search</h2>
        <div className={styles.notConfigured} role="status" data-testid="embedding-not-configured">
          <strong>embedding provider is not configured</strong>
          {embedding.reason && <span>{embedding.reason}</span>}
        </div>
      </section>
    );
  }

  return (
    <section aria-label="Search documents" className="card" data-testid="search-panel">
      <div className={styles.panelHead}>
        <h2 className={styles.panelTitle}>Search</h2>
        <span className="muted" title={`${embedding.dims} dimensions`}>
          {embedding.provider} · {embedding.model}
        </span>
      </div>
      {embedding.notice && (
        <div className={styles.offlineNotice} role="status" data-testid="embedding-offline-notice">
          <strong>{embedding.notice.message}</strong>
          <span>
            Search matches words, not meaning. Set <code>{embedding.notice.variable}</code> on the server and restart it to use an embedding provider.
          </span>
        </div>
      )}
      <form className={styles.searchForm} onSubmit={(e) => void submit(e)} role="search">
        <input
          type="search"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          placeholder="Ask about your documents, e.g. “when do loyalty points expire”"
          aria-label="Search query"
          maxLength={4000}
          data-testid="search-input"
        />
        <div className={styles.segmented} role="radiogroup" aria-label="Search mode">
          {MODES.map((m) => (
            <label key={m.value} title={m.hint} className={mode === m.value ? styles.segmentOn : undefined}>
              <input type="radio" name="search-mode" value={m.value} checked={mode === m.value} onChange={() => setMode(m.value)} />
              {m.label}
            </label>
          ))}
        </div>
        <select value={topK} onChange={(e) => setTopK(Number(e.target.value))} aria-label="Number of results">
          {[5, 10, 20].map((k) => (
            <option key={k} value={k}>Top {k}</option>
          ))}
        </select>
        <button type="submit" className="button primary" disabled={busy || !query.trim()}>
          {busy ? "Searching…" : "Search"}
        </button>
      </form>
      {error && <div className="error-box" role="alert">{error}</div>}
      {result && (
        <div aria-live="polite">
          {result.results.length === 0 ? (
            <p className="empty-state" data-testid="search-empty">Nothing relevant was found for “{result.query}”: no passage of an indexed document holds enough of its words or meaning.</p>
          ) : (
            <ol className={styles.results} data-testid="search-results">
              {result.results.map((hit) => {
                const where = passageLabel(hit);
                return (
                  <li key={hit.chunk_id} className={styles.result} data-testid="search-result" data-document-id={hit.document_id}>
                    <div className={styles.resultHead}>
                      <span
                        className={styles.score}
                        data-testid="search-score"
                        title={`Relevance: the share of the query's words this passage holds, or its similarity in meaning when higher (cosine ${hit.similarity.toFixed(2)}${result.mode === "hybrid" ? `; ranked by the fused score ${hit.score.toFixed(4)}` : ""})`}
                      >
                        {percent(hit.relevance)}
                      </span>
                      <strong>{hit.document_title}</strong>
                      {where && <span className="muted">{where}</span>}
                      <button type="button" className={`link-button ${styles.openLink}`} onClick={() => void open(hit)} aria-label={`Open ${hit.filename}`} title={hit.filename}>
                        Open file{hit.extension === "pdf" && (hit.page ?? hit.page_start) !== null ? ` at page ${hit.page ?? hit.page_start}` : hit.extension === "csv" && hit.rows ? ` at ${passageLabel(hit)}` : ""}
                      </button>
                    </div>
                    <p className={styles.passage}>
                      {/* Folded: the best-matching passage inside the chunk (its page's or rows' part), where the link opens. */}
                      <Highlighted text={expanded.has(hit.chunk_id) ? hit.text : excerpt(hit.passage, 500, result.query)} query={result.query} />
                    </p>
                    {hit.text.length > 500 && (
                      <button
                        type="button"
                        className="link-button"
                        aria-expanded={expanded.has(hit.chunk_id)}
                        onClick={() => setExpanded((current) => new Set(current.has(hit.chunk_id) ? [...current].filter((id) => id !== hit.chunk_id) : [...current, hit.chunk_id]))}
                      >
                        {expanded.has(hit.chunk_id) ? "Show less" : "Show the whole passage"}
                      </button>
                    )}
                  </li>
                );
              })}
            </ol>
          )}
        </div>
      )}
    </section>
  );
}
