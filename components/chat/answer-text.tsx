"use client";

import { Fragment, type MouseEvent } from "react";
import type { ChatSource } from "@/lib/chat/contract";
import { downloadDocument } from "@/lib/documents/contract";
import { callApi } from "@/components/api-client";
import { passageAnchor, passageLabel } from "@/lib/chat/prompt";
import styles from "./chat.module.css";

/** Opens a source: the signed link while it is valid, otherwise a fresh one from the download endpoint. */
export function openSourceHandler(source: ChatSource, onError: (message: string) => void) {
  return async (event: MouseEvent<HTMLAnchorElement>) => {
    const expired = !source.open_url || (source.url_expires_at !== null && Date.parse(source.url_expires_at) < Date.now() + 5000);
    if (!expired) return;
    event.preventDefault();
    // Opened now, while the click still counts as a user gesture; pointed at the file once the fresh link arrives.
    const tab = window.open("about:blank", "_blank");
    try {
      const body = await callApi(downloadDocument, { params: { id: source.document_id }, query: { disposition: "inline" } });
      if (tab) tab.location.href = `${body.url}${passageAnchor({ ...source, page: source.page ?? source.page_start })}`;
    } catch (error) {
      tab?.close();
      onError(`“${source.document_title}” cannot be opened: ${(error as Error).message}`);
    }
  };
}

/** A numbered citation chip that opens its source document (PDFs at the cited page, CSVs at the cited rows). */
export function CitationChip({ source, onError }: { source: ChatSource; onError: (message: string) => void }) {
  const where = passageLabel(source);
  const label = `Source ${source.n}: ${source.document_title}${where ? `, ${where}` : ""}`;
  return (
    <a
      className={styles.cite}
      href={source.open_url ?? source.download_endpoint}
      target="_blank"
      rel="noopener noreferrer"
      title={label}
      aria-label={label}
      data-testid="citation"
      data-document-id={source.document_id}
      onClick={(event) => void openSourceHandler(source, onError)(event)}
    >
      {source.n}
    </a>
  );
}

/**
 * The answer's text with `[n]` markers turned into citation chips; markers
 * that name no source (a model's slip) stay as written.
 */
export function AnswerText({ text, sources, onError }: { text: string; sources: ChatSource[]; onError: (message: string) => void }) {
  const byNumber = new Map(sources.map((s) => [s.n, s]));
  const parts = text.split(/\[(\d{1,3})\]/g);
  return (
    <div className={styles.answerText}>
      {parts.map((part, i) => {
        if (i % 2 === 0) return <Fragment key={i}>{part}</Fragment>;
        const source = byNumber.get(Number(part));
        return source ? <CitationChip key={i} source={source} onError={onError} /> : <Fragment key={i}>[{part}]</Fragment>;
      })}
    </div>
  );
}
