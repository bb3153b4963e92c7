"use client";

import { useState } from "react";
import { attempt } from "../api";
import styles from "../notifications.module.css";

/** What an action said last, beside the control that started it. */
export type Flash = { ok: boolean; text: string } | null;

const STATUS_TONE: Record<string, string> = { delivered: "good", dead: "bad", retrying: "warn", skipped: "", pending: "", sending: "" };

/** A data table that scrolls sideways inside its own box on a narrow screen instead of widening the page. */
export function Table(props: React.ComponentProps<"table">) {
  return (
    <div className={styles.scroll}>
      <table className="grid-table" {...props} />
    </div>
  );
}

export function StatusChip({ status }: { status: string }) {
  return <span className={`chip ${STATUS_TONE[status] ?? ""}`}>{status}</span>;
}

export function Result({ value }: { value: Flash }) {
  if (!value) return null;
  return <span role="status" className={`${styles.result} ${value.ok ? styles.ok : styles.failed}`}>{value.text}</span>;
}

/**
 * A section's actions: `act` runs a call, says "Working…" then its outcome under `key` (a channel test that
 * answers ok: false is a failure), and reloads the page's data after a success.
 */
export function useActions(refresh: () => void) {
  const [flash, setFlash] = useState<Record<string, Flash>>({});
  const note = (key: string, value: Flash) => setFlash((f) => ({ ...f, [key]: value }));
  async function act(key: string, call: () => Promise<unknown>, done: string) {
    note(key, { ok: true, text: "Working…" });
    const res = await attempt(call);
    if (!res.ok) return note(key, { ok: false, text: res.error });
    const outcome = res.data as { ok?: boolean; detail?: string } | undefined;
    if (outcome && outcome.ok === false) return note(key, { ok: false, text: `Test failed: ${outcome.detail}` });
    note(key, { ok: true, text: done });
    refresh();
  }
  return { flash: (key: string) => flash[key] ?? null, note, act };
}
