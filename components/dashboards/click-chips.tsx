"use client";

import type { ClickChip } from "@/lib/dashboards/chart-clicks";
import styles from "./interactions.module.css";

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
