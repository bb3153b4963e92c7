"use client";

import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import type { ChatEvent, ChatMessage, ChatSource } from "@/lib/chat/contract";
import { passageLabel } from "@/lib/chat/prompt";
import { AnswerText, CitationChip, openSourceHandler } from "./answer-text";
import { ChatRequestError, streamChat } from "./stream";
import styles from "./chat.module.css";

type AnswerMode = Extract<ChatEvent, { type: "sources" }>["mode"];

interface Turn {
  id: number;
  question: string;
  text: string;
  sources: ChatSource[];
  mode: AnswerMode | null;
  notice: string | null;
  state: "waiting" | "streaming" | "done" | "error" | "stopped";
  error: string | null;
}

export interface ChatClientProps {
  /** The configured chat model, or null: answers are the retrieved passages. */
  chatModel: string | null;
  embedding: { configured: boolean; reason: string | null; model: string };
}

// Questions the demo documents (docs/demo-documents) answer, so a fresh start shows what chat does.
const EXAMPLES = ["When do loyalty points expire?", "What temperature must the chillers hold?", "Which supplier delivers fresh produce in the West, and when?"];

export function ChatClient({ chatModel, embedding }: ChatClientProps) {
  const [turns, setTurns] = useState<Turn[]>([]);
  const [draft, setDraft] = useState("");
  const [notice, setNotice] = useState<string | null>(null);
  const controller = useRef<AbortController | null>(null);
  const endRef = useRef<HTMLDivElement>(null);
  const inputRef = useRef<HTMLTextAreaElement>(null);
  const nextId = useRef(1);
  const busy = turns.some((t) => t.state === "waiting" || t.state === "streaming");

  useEffect(() => {
    endRef.current?.scrollIntoView({ block: "end", behavior: "smooth" });
  }, [turns]);

  useEffect(() => () => controller.current?.abort(), []);

  const update = (id: number, change: (turn: Turn) => Partial<Turn>) => setTurns((all) => all.map((t) => (t.id === id ? { ...t, ...change(t) } : t)));

  async function ask(question: string) {
    const text = question.trim();
    if (!text || busy) return;
    const history: ChatMessage[] = turns
      .filter((t) => t.state === "done" && t.mode === "model")
      .flatMap((t) => [{ role: "user" as const, content: t.question }, { role: "assistant" as const, content: t.text }]);
    const id = nextId.current++;
    setTurns((all) => [...all, { id, question: text, text: "", sources: [], mode: null, notice: null, state: "waiting", error: null }]);
    setDraft("");
    setNotice(null);
    const abort = new AbortController();
    controller.current = abort;
    try {
      await streamChat([...history, { role: "user", content: text }], abort.signal, (event) => {
        if (event.type === "sources") update(id, () => ({ sources: event.sources, mode: event.mode, notice: event.notice, state: "streaming" }));
        else if (event.type === "delta") update(id, (t) => ({ text: t.text + event.text, state: "streaming" }));
        else if (event.type === "done") update(id, () => ({ state: "done" }));
        else update(id, () => ({ state: "error", error: event.detail }));
      });
      update(id, (t) => (t.state === "streaming" || t.state === "waiting" ? { state: "done" } : {}));
    } catch (error) {
      if (abort.signal.aborted) update(id, () => ({ state: "stopped" }));
      else update(id, () => ({ state: "error", error: error instanceof ChatRequestError ? error.message : "Something went wrong while answering. Try again." }));
    } finally {
      controller.current = null;
      inputRef.current?.focus();
    }
  }

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    void ask(draft);
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    // Enter sends, Shift+Enter starts a new line (IME composition keeps its own Enter).
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      void ask(draft);
    }
  }

  return (
    <div className={styles.chat}>
      <div className={styles.status} data-testid="chat-status">
        {!embedding.configured ? (
          <span className={styles.warn} role="status">
            <strong>embedding provider is not configured</strong>
            {embedding.reason ? `: ${embedding.reason}` : ""}. Questions cannot be answered from documents until it is.
          </span>
        ) : chatModel ? (
          <span>
            Answers are written by <strong>{chatModel}</strong> from your organization&apos;s indexed documents, with numbered citations.
          </span>
        ) : (
          <span>
            No chat model is configured: answers list the best <strong>retrieved passages</strong> with their citations.
          </span>
        )}
      </div>

      <div className={styles.log} aria-live="polite" aria-busy={busy} data-testid="chat-log">
        {turns.length === 0 && (
          <div className={styles.empty}>
            <p>Ask a question about your organization&apos;s documents.</p>
            <div className={styles.examples}>
              {EXAMPLES.map((example) => (
                <button key={example} type="button" className="button" onClick={() => void ask(example)} disabled={busy}>
                  {example}
                </button>
              ))}
            </div>
          </div>
        )}
        {turns.map((turn) => (
          <article key={turn.id} className={styles.turn} data-testid="chat-turn" data-state={turn.state}>
            <div className={styles.question}>
              <span className={styles.srOnly}>You asked: </span>
              {turn.question}
            </div>
            <div className={styles.answer} data-testid="chat-answer">
              {turn.mode === "passages" && <div className={styles.answerLabel}>Retrieved passages (no chat model is configured)</div>}
              {turn.mode === "model" && chatModel && <div className={styles.answerLabel}>{chatModel}</div>}
              {turn.state === "waiting" && <div className={styles.thinking}>Searching your documents…</div>}
              {turn.mode === "passages" && turn.sources.length > 0 ? (
                <PassageList sources={turn.sources} onError={setNotice} />
              ) : turn.text && (
                <AnswerText
                  // The passages answer repeats its label as the first line for API clients; the label above already says it.
                  text={turn.mode === "passages" ? turn.text.replace(/^Retrieved passages \(no chat model is configured\)\s*/, "") : turn.text}
                  sources={turn.sources}
                  onError={setNotice}
                />
              )}
              {turn.state === "streaming" && turn.mode === "model" && <span className={styles.cursor} aria-hidden="true" />}
              {turn.state === "stopped" && <div className="muted">Stopped.</div>}
              {turn.error && <div className="error-box" role="alert">{turn.error}</div>}
              {turn.sources.length > 0 && turn.mode !== "passages" && (
                <details className={styles.sources} open>
                  <summary>{turn.sources.length} source{turn.sources.length === 1 ? "" : "s"}</summary>
                  <ol>
                    {turn.sources.map((source) => {
                      const where = passageLabel(source);
                      return (
                        <li key={source.chunk_id} data-testid="chat-source">
                          <span className={styles.sourceNumber}>{source.n}</span>
                          <div>
                            <a href={source.open_url ?? source.download_endpoint} target="_blank" rel="noopener noreferrer" onClick={(event) => void openSourceHandler(source, setNotice)(event)}>
                              {source.document_title}
                            </a>
                            <span className="muted">
                              {where ? ` · ${where}` : ""} · {Math.round(source.score * 100)}% match
                            </span>
                            <p className={styles.excerpt}>
                              <mark data-testid="cited-passage">{source.passage}</mark>
                            </p>
                          </div>
                        </li>
                      );
                    })}
                  </ol>
                </details>
              )}
            </div>
          </article>
        ))}
        <div ref={endRef} />
      </div>

      {notice && (
        <div className="error-box" role="alert">
          {notice}
        </div>
      )}

      <div className={styles.composer}>
        <form className={styles.composerForm} onSubmit={onSubmit}>
          <label htmlFor="chat-question" className={styles.srOnly}>Your question</label>
          <textarea
            id="chat-question"
            ref={inputRef}
            value={draft}
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={onKeyDown}
            placeholder={embedding.configured ? "Ask about your documents…" : "Document search is not configured"}
            aria-describedby="chat-hint"
            rows={2}
            maxLength={4000}
            disabled={!embedding.configured}
            data-testid="chat-input"
          />
          {busy ? (
            <button type="button" className="button" onClick={() => controller.current?.abort()}>
              Stop
            </button>
          ) : (
            <button type="submit" className="button primary" disabled={!draft.trim() || !embedding.configured}>
              Ask
            </button>
          )}
        </form>
        <p id="chat-hint" className={styles.hint}>
          Enter sends, Shift+Enter starts a new line. Citations open the source document.
        </p>
      </div>
    </div>
  );
}

/** Without a chat model the answer is the passages themselves: one card each, with its citation and link. */
function PassageList({ sources, onError }: { sources: ChatSource[]; onError: (message: string) => void }) {
  return (
    <ol className={styles.passages}>
      {sources.map((source) => {
        const where = passageLabel(source);
        return (
          <li key={source.chunk_id} className={styles.passage} data-testid="chat-source">
            <div className={styles.passageHead}>
              <CitationChip source={source} onError={onError} />
              <a href={source.open_url ?? source.download_endpoint} target="_blank" rel="noopener noreferrer" onClick={(event) => void openSourceHandler(source, onError)(event)}>
                {source.document_title}
              </a>
              {where && <span className="muted">{where}</span>}
              <span className={styles.match}>{Math.round(source.score * 100)}% match</span>
            </div>
            <p className={styles.excerpt}>
              “<mark data-testid="cited-passage">{source.passage}</mark>”
            </p>
          </li>
        );
      })}
    </ol>
  );
}
