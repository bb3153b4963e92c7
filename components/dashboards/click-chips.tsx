"use client";

import { useCallback, useMemo, useSyncExternalStore } from "react";
import { restoredChips, type ClickChip } from "@/lib/dashboards/chart-clicks";
import styles from "./interactions.module.css";

/**
 * The chips of the page at `path`, kept in the tab's sessionStorage so a reload keeps each click's undo (the URL
 * keeps the filters themselves). Storage refused (a partner's iframe under strict third-party rules) keeps them in
 * memory for the page's life.
 */
export function useClickChips(path: string): [ClickChip[], (update: (previous: ClickChip[]) => ClickChip[]) => void] {
  const key = `quarry:click-chips:${path}`;
  // The server renders no chips; the browser's stored ones follow hydration.
  const stored = useSyncExternalStore(subscribe, () => readStored(key), () => null);
  const chips = useMemo(() => restoredChips(stored), [stored]);
  const update = useCallback((next: (previous: ClickChip[]) => ClickChip[]) => {
    const chips = next(restoredChips(readStored(key)));
    writeStored(key, chips.length > 0 ? JSON.stringify(chips) : null);
  }, [key]);
  return [chips, update];
}

const listeners = new Set<() => void>();
const inMemory = new Map<string, string>();

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

function readStored(key: string): string | null {
  if (inMemory.has(key)) return inMemory.get(key)!;
  try {
    return window.sessionStorage.getItem(key);
  } catch {
    return null;
  }
}

function writeStored(key: string, value: string | null) {
  inMemory.delete(key);
  try {
    if (value === null) window.sessionStorage.removeItem(key);
    else window.sessionStorage.setItem(key, value);
  } catch {
    // Refused or full: this page keeps them.
    if (value !== null) inMemory.set(key, value);
  }
  for (const listener of listeners) listener();
}

/** One chip per click that still holds, each with a button that puts its filters back as they were. */
export function ClickChips({ chips, onUndo }: { chips: readonly ClickChip[]; onUndo: (chip: ClickChip) => void }) {
  if (chips.length === 0) return null;
  return (
    <ul className={styles.chips} aria-label="Filters set by clicking a chart" data-testid="click-chips">
      {chips.map((chip) => {
        const text = chip.changes.map((c) => `${c.label}: ${c.text}`).join(", ");
        return (
          <li key={chip.id} className={styles.chip} data-testid="click-chip">
            <span>
              {text} <span className={styles.chipSource}>(from {chip.source})</span>
            </span>
            <button type="button" className={styles.undo} aria-label={`Undo ${text}`} title="Undo" onClick={() => onUndo(chip)}>
              ×
            </button>
          </li>
        );
      })}
    </ul>
  );
}

/** Why a click did less than its chart declares (a filter fixed by the embedding page, a value that does not fit). */
export function ClickNote({ note, onDismiss }: { note: string | null; onDismiss: () => void }) {
  return (
    <div role="status" aria-live="polite" data-testid="click-note">
      {note && (
        <p className={styles.note}>
          {note}
          <button type="button" onClick={onDismiss}>
            Dismiss
          </button>
        </p>
      )}
    </div>
  );
}
