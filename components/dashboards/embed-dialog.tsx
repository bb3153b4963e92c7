"use client";

import { useRef, useState, type FormEvent } from "react";
import type { z } from "zod";
import { embedDashboard, type EmbedResponse } from "@/lib/dashboards/contract";
import { callApi } from "@/components/api-client";
import type { FilterSummary } from "@/lib/dashboards/filter-values";
import { decodeFilterValue } from "@/lib/dashboards/wiring";
import styles from "./dashboards.module.css";
import { formatInstant } from "@/lib/dashboards/format";
import { useOrgTimeZone } from "@/components/org-time-zone";

interface EmbedDialogProps {
  dashboardId: string;
  published: boolean;
  allowEmbed: boolean;
  filterWidgets: FilterSummary[];
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
                      {f.options.length > 0 ? (
                        <LockedChoice filter={f} value={locked[f.id] ?? ""} onChange={(text) => setLocked((l) => ({ ...l, [f.id]: text }))} />
                      ) : (
                        <input
                          name={`locked-${f.id}`}
                          placeholder={DATE_CONTROLS.has(f.control) ? "e.g. last month, or 2026-01-01 to 2026-03-31" : "a value"}
                          value={locked[f.id] ?? ""}
                          onChange={(e) => setLocked((l) => ({ ...l, [f.id]: e.target.value }))}
                        />
                      )}
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

/**
 * A locked value picked among the filter's options by their labels (a location by its name, never its id): one
 * option, or several for a multiple filter, kept as the JSON the lock is sent as ("" leaves the filter open).
 */
function LockedChoice({ filter, value, onChange }: { filter: FilterSummary; value: string; onChange: (text: string) => void }) {
  const picked = new Set(value === "" ? [] : [decodeFilterValue(value)].flat().map((v) => JSON.stringify(v)));
  const encode = (keys: string[]) => {
    const values = filter.options.filter((o) => keys.includes(o.key)).map((o) => o.value);
    return values.length === 0 ? "" : JSON.stringify(filter.multiple ? values : values[0]);
  };
  const selected = filter.options.filter((o) => picked.has(JSON.stringify(o.value))).map((o) => o.key);
  if (filter.multiple) {
    return (
      <select name={`locked-${filter.id}`} multiple value={selected} onChange={(e) => onChange(encode([...e.target.selectedOptions].map((o) => o.value)))}>
        {filter.options.map((o) => (
          <option key={o.key} value={o.key}>
            {o.label}
          </option>
        ))}
      </select>
    );
  }
  return (
    <select name={`locked-${filter.id}`} value={selected[0] ?? ""} onChange={(e) => onChange(encode(e.target.value === "" ? [] : [e.target.value]))}>
      <option value="">Not locked: viewers choose</option>
      {filter.options.map((o) => (
        <option key={o.key} value={o.key}>
          {o.label}
        </option>
      ))}
    </select>
  );
}
