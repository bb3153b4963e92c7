"use client";

import { useEffect, useId, useMemo, useRef, useState } from "react";
import type { WidgetManifest } from "@/lib/manifest/schema";
import { Calendar } from "./calendar";
import { describeDateExpression, effectiveValue, filterOptions, joinDateRange, optionKey, selectedValues, splitDateRange, type FilterOption, type Scalar } from "./filter-values";
import styles from "./widgets.module.css";

interface FilterWidgetProps {
  widget: WidgetManifest;
  columns: string[];
  rows: Record<string, unknown>[];
  timeZone: string;
  value: unknown;
  onChange?: (value: unknown) => void;
  locked: boolean;
  /** The options come from data that has not arrived yet. */
  optionsPending: boolean;
}

/**
 * A filter control. Its value is what lib/query/filters.ts reads: a scalar (single select,
 * radio), a list (multiple select), or a date expression string (date, date_range, calendar).
 * Clearing sends null, which the engine reads as "not filtered" (unlike an absent value, which
 * means the manifest default).
 */
export function FilterWidget(props: FilterWidgetProps) {
  const { widget, locked } = props;
  const display = widget.spec.display.filter;
  const control = display?.control ?? "select";
  const label = display?.label ?? widget.metadata.name;
  const id = useId();
  const value = effectiveValue(props.value, display);
  const options = useMemo(() => filterOptions(display, widget.spec.data?.mappings, props.columns, props.rows), [display, widget.spec.data?.mappings, props.columns, props.rows]);
  const commit = (next: unknown) => props.onChange?.(next);
  const readOnly = locked || !props.onChange;

  if (locked) {
    return (
      <div className={styles.filter} data-control={control}>
        <span className={styles.filterLabel} id={`${id}-label`}>
          {label}
        </span>
        <p className={styles.lockedValue} aria-labelledby={`${id}-label`} title="Fixed by the page this dashboard is embedded in">
          <span aria-hidden="true">🔒</span> {describeLocked(control, value, options, props.timeZone)}
          <span className={styles.srOnly}> (fixed by the embedding page)</span>
        </p>
      </div>
    );
  }

  let body: React.ReactNode;
  switch (control) {
    case "select":
      body = display?.multiple ? (
        <MultiSelect id={id} label={label} options={options} value={selectedValues(value)} onChange={commit} disabled={readOnly || props.optionsPending} pending={props.optionsPending} />
      ) : (
        <select
          id={id}
          className={styles.select}
          value={selectedValues(value).length > 0 ? optionKey(selectedValues(value)[0]) : ""}
          onChange={(e) => commit(e.target.value === "" ? null : (JSON.parse(e.target.value) as Scalar))}
          disabled={readOnly || props.optionsPending}
        >
          <option value="">{props.optionsPending ? "Loading…" : "All"}</option>
          {options.map((o) => (
            <option key={o.key} value={o.key}>
              {o.label}
            </option>
          ))}
        </select>
      );
      break;
    case "radio":
      body = <RadioGroup name={id} label={label} options={options} value={selectedValues(value)} onChange={commit} disabled={readOnly} />;
      break;
    case "date":
      body = <DateExpressionInput id={id} value={typeof value === "string" ? value : ""} onCommit={commit} timeZone={props.timeZone} disabled={readOnly} />;
      break;
    case "date_range":
      body = <DateRangeInput id={id} value={typeof value === "string" ? value : ""} onCommit={commit} timeZone={props.timeZone} disabled={readOnly} />;
      break;
    case "calendar":
      body = <Calendar id={id} value={typeof value === "string" ? value : ""} onCommit={commit} timeZone={props.timeZone} disabled={readOnly} />;
      break;
  }
  const grouped = control === "radio" || control === "calendar";
  return (
    <div className={styles.filter} data-control={control}>
      {grouped ? (
        <span className={styles.filterLabel} id={`${id}-label`}>
          {label}
        </span>
      ) : (
        <label className={styles.filterLabel} htmlFor={id}>
          {label}
        </label>
      )}
      {body}
    </div>
  );
}

function describeLocked(control: string, value: unknown, options: FilterOption[], timeZone: string): string {
  if (value === undefined || value === null || value === "" || (Array.isArray(value) && value.length === 0)) return "All";
  if (control === "date" || control === "date_range" || control === "calendar") {
    const text = String(value);
    const resolved = describeDateExpression(text, timeZone);
    return resolved.ok ? `${text} (${resolved.text})` : text;
  }
  const labels = selectedValues(value).map((v) => options.find((o) => o.key === optionKey(v))?.label ?? String(v));
  return labels.join(", ");
}

function ClearButton({ onClear, label, disabled }: { onClear: () => void; label: string; disabled?: boolean }) {
  return (
    <button type="button" className={styles.clearButton} onClick={onClear} aria-label={`Clear ${label}`} title="Clear" disabled={disabled}>
      ×
    </button>
  );
}

function MultiSelect({ id, label, options, value, onChange, disabled, pending }: { id: string; label: string; options: FilterOption[]; value: Scalar[]; onChange: (value: unknown) => void; disabled: boolean; pending: boolean }) {
  const [open, setOpen] = useState(false);
  const root = useRef<HTMLDivElement>(null);
  const selected = new Set(value.map(optionKey));
  useEffect(() => {
    if (!open) return;
    const close = (event: Event) => {
      if (event instanceof KeyboardEvent ? event.key === "Escape" : !root.current?.contains(event.target as Node)) setOpen(false);
    };
    document.addEventListener("pointerdown", close);
    document.addEventListener("keydown", close);
    return () => {
      document.removeEventListener("pointerdown", close);
      document.removeEventListener("keydown", close);
    };
  }, [open]);
  const toggle = (option: FilterOption) => {
    const next = selected.has(option.key) ? value.filter((v) => optionKey(v) !== option.key) : [...value, option.value];
    onChange(next.length === 0 ? null : next);
  };
  const summary = pending ? "Loading…" : value.length === 0 ? "All" : value.length === 1 ? (options.find((o) => o.key === optionKey(value[0]))?.label ?? String(value[0])) : `${value.length} selected`;
  return (
    <div className={styles.multi} ref={root}>
      <div className={styles.inputRow}>
        <button id={id} type="button" className={styles.multiButton} aria-haspopup="listbox" aria-expanded={open} onClick={() => setOpen(!open)} disabled={disabled}>
          <span className={styles.multiSummary}>{summary}</span>
          <span aria-hidden="true">▾</span>
        </button>
        {value.length > 0 && <ClearButton onClear={() => onChange(null)} label={label} />}
      </div>
      {open && (
        <fieldset className={styles.multiList}>
          <legend className={styles.srOnly}>{label}</legend>
          {options.length === 0 && <p className={styles.hint}>No options</p>}
          {options.map((o) => (
            <label key={o.key} className={styles.multiOption}>
              <input type="checkbox" checked={selected.has(o.key)} onChange={() => toggle(o)} />
              {o.label}
            </label>
          ))}
        </fieldset>
      )}
    </div>
  );
}

function RadioGroup({ name, label, options, value, onChange, disabled }: { name: string; label: string; options: FilterOption[]; value: Scalar[]; onChange: (value: unknown) => void; disabled: boolean }) {
  const current = value.length > 0 ? optionKey(value[0]) : "";
  return (
    <div role="radiogroup" aria-labelledby={`${name}-label`} className={styles.radios}>
      {[{ key: "", label: "All", value: null }, ...options].map((o) => (
        <label key={o.key} className={styles.radio}>
          <input type="radio" name={name} value={o.key} checked={current === o.key} disabled={disabled} onChange={() => onChange(o.value)} />
          {o.label}
        </label>
      ))}
      {value.length > 0 && <ClearButton onClear={() => onChange(null)} label={label} disabled={disabled} />}
    </div>
  );
}

/** Shows what the typed (not yet committed) text resolves to, or why it cannot be read. */
function ResolvedRange({ id, text, timeZone }: { id: string; text: string; timeZone: string }) {
  if (text.trim() === "") return <p id={id} className={styles.hint}>All dates</p>;
  const resolved = describeDateExpression(text, timeZone);
  return resolved.ok ? (
    <p id={id} className={styles.hint}>
      {resolved.text}
    </p>
  ) : (
    <p id={id} className={styles.invalid} role="alert">
      {resolved.error}
    </p>
  );
}

/**
 * A text box for a date expression ("last month", "2025-01-01 to 2025-03-31", …). The
 * resolved range shows as you type; the value is committed on Enter or when leaving the box,
 * and only when it can be read, so a half-typed expression never reaches the query.
 */
function useDraft(value: string, onCommit: (value: unknown) => void, timeZone: string) {
  const [draft, setDraft] = useState(value);
  const [committed, setCommitted] = useState(value);
  // The value can change from outside (URL, clear, date pickers): follow it.
  if (value !== committed) {
    setCommitted(value);
    setDraft(value);
  }
  const commit = (text: string) => {
    const trimmed = text.trim();
    if (trimmed === value) return;
    if (trimmed === "") return onCommit(null);
    if (describeDateExpression(trimmed, timeZone).ok) onCommit(trimmed);
  };
  return { draft, setDraft, commit };
}

function DateExpressionInput({ id, value, onCommit, timeZone, disabled }: { id: string; value: string; onCommit: (value: unknown) => void; timeZone: string; disabled: boolean }) {
  const { draft, setDraft, commit } = useDraft(value, onCommit, timeZone);
  return (
    <>
      <div className={styles.inputRow}>
        <input
          id={id}
          className={styles.textInput}
          type="text"
          value={draft}
          placeholder="e.g. last month, 2025-03-01, 7 days ago"
          autoComplete="off"
          spellCheck={false}
          aria-describedby={`${id}-resolved`}
          disabled={disabled}
          onChange={(e) => setDraft(e.target.value)}
          onBlur={() => commit(draft)}
          onKeyDown={(e) => {
            if (e.key === "Enter") commit(draft);
            if (e.key === "Escape") setDraft(value);
          }}
        />
        {value !== "" && <ClearButton onClear={() => onCommit(null)} label="date" disabled={disabled} />}
      </div>
      <ResolvedRange id={`${id}-resolved`} text={draft} timeZone={timeZone} />
    </>
  );
}

function DateRangeInput({ id, value, onCommit, timeZone, disabled }: { id: string; value: string; onCommit: (value: unknown) => void; timeZone: string; disabled: boolean }) {
  const { draft, setDraft, commit } = useDraft(value, onCommit, timeZone);
  const days = splitDateRange(value);
  const pick = (from: string, to: string) => {
    const next = joinDateRange(from, to);
    onCommit(next === "" ? null : next);
  };
  return (
    <>
      <div className={styles.inputRow}>
        <input
          id={id}
          className={styles.textInput}
          type="text"
          value={draft}
          placeholder="e.g. 2025-01-01 to 2025-03-31, this year"
          autoComplete="off"
          spellCheck={false}
          aria-describedby={`${id}-resolved`}
          disabled={disabled}
          onChange={(e) => setDraft(e.target.value)}
          onBlur={() => commit(draft)}
          onKeyDown={(e) => {
            if (e.key === "Enter") commit(draft);
            if (e.key === "Escape") setDraft(value);
          }}
        />
        {value !== "" && <ClearButton onClear={() => onCommit(null)} label="date range" disabled={disabled} />}
      </div>
      <div className={styles.inputRow}>
        <input type="date" className={styles.dateInput} aria-label="From" value={days.from} max={days.to || undefined} disabled={disabled} onChange={(e) => pick(e.target.value, days.to)} />
        <span aria-hidden="true">–</span>
        <input type="date" className={styles.dateInput} aria-label="To" value={days.to} min={days.from || undefined} disabled={disabled} onChange={(e) => pick(days.from, e.target.value)} />
      </div>
      <ResolvedRange id={`${id}-resolved`} text={draft} timeZone={timeZone} />
    </>
  );
}
