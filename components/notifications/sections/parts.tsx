"use client";

import { createContext, useContext, useState } from "react";
import { attempt } from "../api";
import styles from "../notifications.module.css";

/** Rule key → its name (the organization's rules and the base rules), given once by the admin page. */
const RuleNames = createContext<ReadonlyMap<string, string>>(new Map());
export const RuleNamesProvider = RuleNames.Provider;

/** A rule's name by its key, for text that cannot hold an element (an <option>); the key when no rule has it. */
export function useRuleName(): (ruleKey: string) => string {
  const names = useContext(RuleNames);
  return (ruleKey) => names.get(ruleKey) ?? ruleKey;
}

/** A rule as the page names it: its name, the key on hover; a key no rule has (a report or alert delivery) as stored. */
export function RuleName({ ruleKey }: { ruleKey: string }) {
  const name = useContext(RuleNames).get(ruleKey);
  return name === undefined ? <span className={styles.mono}>{ruleKey}</span> : <span title={ruleKey}>{name}</span>;
}

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
