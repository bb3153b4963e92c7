"use client";

import { useRef, useState, type FormEvent } from "react";
import type { z } from "zod";
import { embedDashboard, type EmbedResponse } from "@/lib/dashboards/contract";
import { callApi } from "@/components/api-client";
import { decodeFilterValue } from "@/lib/dashboards/wiring";
import styles from "./dashboards.module.css";
import { formatInstant } from "@/lib/dashboards/format";
import { useOrgTimeZone } from "@/components/org-time-zone";

interface EmbedDialogProps {
  dashboardId: string;
  published: boolean;
  allowEmbed: boolean;
  filterWidgets: { id: string; name: string; control: string }[];
}

type EmbedAnswer = z.output<typeof EmbedResponse>;

const DATE_CONTROLS = new Set(["date", "date_range", "calendar"]);

const EXPIRY_CHOICES = [
  { seconds: 3600, label: "1 hour" },
  { seconds: 24 * 3600, label: "1 day" },
  { seconds: 7 * 24 * 3600, label: "7 days" },
  { seconds: 30 * 24 * 3600, label: "30 days" },
];

/** Creates an embed grant (locked filters, partner origins, expiry) and shows the iframe snippet to copy. */
export function EmbedDialog({ dashboardId, published, allowEmbed, filterWidgets }: EmbedDialogProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  const timeZone = useOrgTimeZone();
  const [locked, setLocked] = useState<Record<string, string>>({});
  const [origins, setOrigins] = useState("");
  const [expiresIn, setExpiresIn] = useState(24 * 3600);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [answer, setAnswer] = useState<EmbedAnswer | null>(null);
  const [copied, setCopied] = useState(false);

  const refusal = !published
    ? "Publish the dashboard first: embeds always show a published version."
    : !allowEmbed
      ? "This dashboard's manifest does not allow embedding. Set platform.allow_embed: true, then publish."
      : null;

  async function create(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setAnswer(null);
    try {
      const lockedFilters = Object.fromEntries(Object.entries(locked).filter(([, v]) => v.trim() !== "").map(([id, v]) => [id, decodeFilterValue(v.trim())]));
      const body = { locked_filters: lockedFilters, allowed_origins: origins.split(/[\s,]+/).filter(Boolean), expires_in: expiresIn };
      setAnswer(await callApi(embedDashboard, { params: { id: dashboardId }, body }));
    } catch (error) {
      setError(`Embedding refused: ${(error as Error).message}`);
    } finally {
      setBusy(false);
    }
  }

  async function copy() {
    if (!answer) return;
    await navigator.clipboard.writeText(answer.iframe);
    setCopied(true);
    setTimeout(() => setCopied(false), 2000);
  }

  return (
    <>
      <button type="button" className="button" onClick={() => dialog.current?.showModal()}>
        Embed
      </button>
      <dialog ref={dialog} className={styles.dialog} aria-labelledby="embed-title">
        <form className={styles.dialogBody} onSubmit={create}>
          <h2 id="embed-title">Embed this dashboard</h2>
          {refusal ? (
            <p className={styles.error} role="alert">
              {refusal}
            </p>
          ) : (
            <>
              {filterWidgets.length > 0 && (
                <fieldset className={styles.field} style={{ border: "none", padding: 0, margin: 0 }}>
                  <legend>Locked filters (the embedding page cannot change them; leave empty to let viewers choose)</legend>
                  {filterWidgets.map((f) => (
                    <label key={f.id} className={styles.field}>
                      <span>{f.name}</span>
                      <input
                        name={`locked-${f.id}`}
                        placeholder={DATE_CONTROLS.has(f.control) ? "e.g. last month, or 2026-01-01 to 2026-03-31" : 'a value, or a JSON list such as ["loc_acme_nyc"]'}
                        value={locked[f.id] ?? ""}
                        onChange={(e) => setLocked((l) => ({ ...l, [f.id]: e.target.value }))}
                      />
                    </label>
                  ))}
                </fieldset>
              )}
              <label className={styles.field}>
                <span>Partner origins allowed to frame it</span>
                <textarea name="origins" rows={2} placeholder="https://partner.example" value={origins} onChange={(e) => setOrigins(e.target.value)} />
                <span className={styles.hint}>One per line. None: any site may frame it.</span>
              </label>
              <label className={styles.field}>
                <span>Expires after</span>
                <select value={expiresIn} onChange={(e) => setExpiresIn(Number(e.target.value))}>
                  {EXPIRY_CHOICES.map((c) => (
                    <option key={c.seconds} value={c.seconds}>
                      {c.label}
                    </option>
                  ))}
                </select>
              </label>
            </>
          )}
          {error && (
            <p className={styles.error} role="alert">
              {error}
            </p>
          )}
          {answer && (
            <div className={styles.field}>
              <label className={styles.field}>
                <span>Iframe snippet (valid until {formatInstant(answer.expires_at, timeZone)})</span>
                <textarea className={styles.snippet} readOnly value={answer.iframe} data-testid="embed-snippet" onFocus={(e) => e.currentTarget.select()} />
              </label>
              <span className={styles.hint}>
                <a href={answer.url} target="_blank" rel="noreferrer" data-testid="embed-url">
                  Open the embed page
                </a>
              </span>
            </div>
          )}
          <div className={styles.dialogActions}>
            {answer && (
              <button type="button" className="button" onClick={copy}>
                {copied ? "Copied" : "Copy snippet"}
              </button>
            )}
            <button type="button" className="button" onClick={() => dialog.current?.close()}>
              Close
            </button>
            {!refusal && (
              <button type="submit" className="button primary" disabled={busy}>
                {busy ? "Creating…" : answer ? "Create another" : "Create embed"}
              </button>
            )}
          </div>
        </form>
      </dialog>
    </>
  );
}
