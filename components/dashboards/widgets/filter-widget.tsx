"use client";

import { useEffect, useEffectEvent, useId, useLayoutEffect, useMemo, useRef, useState } from "react";
import { createPortal } from "react-dom";
import type { WidgetManifest } from "@/lib/manifest/schema";
import { Calendar } from "./calendar";
import { DATE_PRESETS, datePresetOf, describeAppliedDate, describeDateExpression, effectiveValue, filterOptions, joinDateRange, optionKey, selectedValues, splitDateRange, typedDateState, type FilterOption, type Scalar } from "@/lib/dashboards/filter-values";
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
  /** Date boxes: the text left in the box that is not applied (it cannot be read), or null. */
  onUnappliedChange?: (text: string | null) => void;
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
        <div className={styles.filterHead}>
          <span className={styles.filterLabel} id={`${id}-label`}>
            {label}
          </span>
        </div>
        <p className={styles.lockedValue} aria-labelledby={`${id}-label`} title={`${describeLocked(control, value, options, props.timeZone)}. Fixed by the page this dashboard is embedded in.`}>
          <LockIcon />
          <span className={styles.lockedText}>{describeLocked(control, value, options, props.timeZone)}</span>
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
      body = <RadioGroup name={id} options={options} value={selectedValues(value)} onChange={commit} disabled={readOnly} />;
      break;
    case "date":
    case "date_range":
      // These draw their own label row: the resolved range sits beside the label, so it costs no height.
      return (
        <div className={styles.filter} data-control={control}>
          <DateExpressionInput
            id={id}
            label={label}
            range={control === "date_range"}
            value={typeof value === "string" ? value : ""}
            onCommit={commit}
            onUnappliedChange={props.onUnappliedChange}
            timeZone={props.timeZone}
            disabled={readOnly}
          />
        </div>
      );
    case "calendar":
      body = <Calendar id={id} value={typeof value === "string" ? value : ""} onCommit={commit} timeZone={props.timeZone} disabled={readOnly} />;
      break;
  }
  const grouped = control === "radio" || control === "calendar";
  return (
    <div className={styles.filter} data-control={control}>
      <div className={styles.filterHead}>
        {grouped ? (
          <span className={styles.filterLabel} id={`${id}-label`}>
            {label}
          </span>
        ) : (
          <label className={styles.filterLabel} htmlFor={id}>
            {label}
          </label>
        )}
      </div>
      {body}
    </div>
  );
}

/** Drawn rather than an emoji, which not every system font has. */
function LockIcon() {
  return (
    <svg className={styles.lockIcon} viewBox="0 0 16 16" width="14" height="14" aria-hidden="true" focusable="false">
      <path d="M4.5 7V5a3.5 3.5 0 0 1 7 0v2" fill="none" stroke="currentColor" strokeWidth="1.6" />
      <rect x="2.75" y="7" width="10.5" height="7.5" rx="1.5" fill="currentColor" />
    </svg>
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

/**
 * Checkboxes in a popover. The list is portalled to <body> with fixed positioning: the grid's
 * cells clip their content and form their own stacking contexts, so a list drawn inside the
 * card would be cut off or painted under the next widget. Focus moves into the list when it
 * opens; Escape (or focus leaving it) closes it and returns focus to the button.
 */
function MultiSelect({ id, label, options, value, onChange, disabled, pending }: { id: string; label: string; options: FilterOption[]; value: Scalar[]; onChange: (value: unknown) => void; disabled: boolean; pending: boolean }) {
  const [open, setOpen] = useState(false);
  const [place, setPlace] = useState<{ top: number; left: number; width: number; maxHeight: number } | null>(null);
  const button = useRef<HTMLButtonElement>(null);
  const list = useRef<HTMLFieldSetElement>(null);
  const selected = new Set(value.map(optionKey));

  useLayoutEffect(() => {
    if (!open) return;
    const measure = () => {
      const rect = button.current?.getBoundingClientRect();
      if (!rect) return;
      const below = window.innerHeight - rect.bottom - 12;
      setPlace({ top: rect.bottom + 4, left: rect.left, width: Math.max(rect.width, 200), maxHeight: Math.max(160, Math.min(320, below)) });
    };
    measure();
    list.current?.querySelector("input")?.focus();
    window.addEventListener("resize", measure);
    window.addEventListener("scroll", measure, true);
    return () => {
      window.removeEventListener("resize", measure);
      window.removeEventListener("scroll", measure, true);
    };
  }, [open]);

  useEffect(() => {
    if (!open) return;
    const outside = (event: Event) => {
      const target = event.target as Node;
      if (!list.current?.contains(target) && !button.current?.contains(target)) setOpen(false);
    };
    document.addEventListener("pointerdown", outside);
    return () => document.removeEventListener("pointerdown", outside);
  }, [open]);

  const close = (refocus: boolean) => {
    setOpen(false);
    if (refocus) button.current?.focus();
  };
  const toggle = (option: FilterOption) => {
    const next = selected.has(option.key) ? value.filter((v) => optionKey(v) !== option.key) : [...value, option.value];
    onChange(next.length === 0 ? null : next);
  };
  const summary = pending ? "Loading…" : value.length === 0 ? "All" : value.length === 1 ? (options.find((o) => o.key === optionKey(value[0]))?.label ?? String(value[0])) : `${value.length} selected`;
  return (
    <div className={styles.inputRow}>
      <button
        ref={button}
        id={id}
        type="button"
        className={styles.multiButton}
        aria-haspopup="true"
        aria-expanded={open}
        aria-controls={`${id}-list`}
        onClick={() => setOpen(!open)}
        onKeyDown={(e) => {
          if (e.key === "ArrowDown" && !open) {
            e.preventDefault();
            setOpen(true);
          }
        }}
        disabled={disabled}
      >
        <span className={styles.multiSummary}>{summary}</span>
        <span aria-hidden="true">▾</span>
      </button>
      {value.length > 0 && <ClearButton onClear={() => onChange(null)} label={label} />}
      {open &&
        place &&
        createPortal(
          <fieldset
            ref={list}
            id={`${id}-list`}
            className={styles.multiList}
            style={{ top: place.top, left: place.left, width: place.width, maxHeight: place.maxHeight }}
            onKeyDown={(e) => {
              if (e.key === "Escape") {
                e.preventDefault();
                close(true);
              }
            }}
            onBlur={(e) => {
              const next = e.relatedTarget as Node | null;
              if (next && !list.current?.contains(next) && next !== button.current) close(false);
            }}
          >
            <legend className={styles.srOnly}>{label}</legend>
            {options.length === 0 && <p className={styles.hint}>No options</p>}
            {options.map((o) => (
              <label key={o.key} className={styles.multiOption}>
                <input type="checkbox" checked={selected.has(o.key)} onChange={() => toggle(o)} />
                {o.label}
              </label>
            ))}
          </fieldset>,
          document.body,
        )}
    </div>
  );
}

/** Radio buttons with an "All" choice first, which clears the filter. */
function RadioGroup({ name, options, value, onChange, disabled }: { name: string; options: FilterOption[]; value: Scalar[]; onChange: (value: unknown) => void; disabled: boolean }) {
  const current = value.length > 0 ? optionKey(value[0]) : "";
  return (
    <div role="radiogroup" aria-labelledby={`${name}-label`} className={styles.radios}>
      {[{ key: "", label: "All", value: null }, ...options].map((o) => (
        <label key={o.key} className={styles.radio}>
          <input type="radio" name={name} value={o.key} checked={current === o.key} disabled={disabled} onChange={() => onChange(o.value)} />
          {o.label}
        </label>
      ))}
    </div>
  );
}

/** What the typed (not yet committed) text resolves to, or why it cannot be read; once the box is left with such text, that it is not applied. */
function ResolvedRange({ id, text, timeZone, unapplied }: { id: string; text: string; timeZone: string; unapplied: boolean }) {
  if (text.trim() === "") {
    return (
      <span id={id} className={styles.hint}>
        All dates
      </span>
    );
  }
  const resolved = describeDateExpression(text, timeZone);
  return resolved.ok ? (
    <span id={id} className={styles.hint} data-resolved>
      {resolved.text}
    </span>
  ) : (
    <span id={id} className={styles.invalid} role="alert" title={resolved.error} data-unapplied={unapplied || undefined}>
      {unapplied ? `Not applied: ${resolved.error}` : resolved.error}
    </span>
  );
}

/**
 * A text box for a date expression ("last month", "2025-01-01 to 2025-03-31", …). The
 * resolved range shows beside the label as you type; the value is committed on Enter or when
 * leaving the box, and only when it can be read, so a half-typed expression never reaches the
 * query. Text that cannot be read stays in the box marked "Not applied" (never silently swapped
 * for the applied value), with a button back to the applied value (Escape does the same), and
 * is reported through `onUnappliedChange` so the widgets can say which value they still show.
 * Beside the box, presets (Today, Last 7 days, Last month, …) write the expression the box would
 * take typed; under it, the browser's own date picker writes a day ("YYYY-MM-DD"), or with
 * `range` a from/to pair writing "<from> to <to>".
 */
function DateExpressionInput({
  id,
  label,
  range,
  value,
  onCommit,
  onUnappliedChange,
  timeZone,
  disabled,
}: {
  id: string;
  label: string;
  range: boolean;
  value: string;
  onCommit: (value: unknown) => void;
  onUnappliedChange?: (text: string | null) => void;
  timeZone: string;
  disabled: boolean;
}) {
  const [draft, setDraft] = useState(value);
  const [shown, setShown] = useState(value);
  const [focused, setFocused] = useState(false);
  // The value can change from outside (URL, clear, the pickers): follow it.
  if (value !== shown) {
    setShown(value);
    setDraft(value);
  }
  const unapplied = typedDateState(draft, value, focused, timeZone) === "unapplied";
  const unappliedText = unapplied ? draft.trim() : null;
  const report = useEffectEvent((text: string | null) => onUnappliedChange?.(text));
  useEffect(() => {
    report(unappliedText);
  }, [unappliedText]);
  // Gone from the page (another tab), the text is gone too.
  useEffect(() => () => report(null), []);
  const commit = () => {
    const text = draft.trim();
    if (text === value) return;
    if (text === "") onCommit(null);
    else if (describeDateExpression(text, timeZone).ok) onCommit(text);
  };
  const applied = describeAppliedDate(value, timeZone);
  const days = splitDateRange(value);
  const pick = (from: string, to: string) => {
    const next = joinDateRange(from, to);
    onCommit(next === "" ? null : next);
  };
  return (
    <>
      <div className={styles.filterHead}>
        <label className={styles.filterLabel} htmlFor={id}>
          {label}
        </label>
        <ResolvedRange id={`${id}-resolved`} text={draft} timeZone={timeZone} unapplied={unapplied} />
      </div>
      <div className={styles.inputRow}>
        <input
          id={id}
          className={`${styles.textInput} ${unapplied ? styles.unappliedInput : ""}`}
          type="text"
          value={draft}
          placeholder={range ? "e.g. 2025-01-01 to 2025-03-31, this year" : "e.g. last month, 2025-03-01, 7 days ago"}
          autoComplete="off"
          spellCheck={false}
          aria-describedby={`${id}-resolved ${id}-applied`}
          aria-invalid={draft.trim() !== "" && !describeDateExpression(draft, timeZone).ok}
          disabled={disabled}
          onChange={(e) => setDraft(e.target.value)}
          onFocus={() => setFocused(true)}
          onBlur={() => {
            setFocused(false);
            commit();
          }}
          onKeyDown={(e) => {
            if (e.key === "Enter") commit();
            if (e.key === "Escape") setDraft(value);
          }}
        />
        {unapplied ? (
          <button type="button" className={styles.clearButton} onClick={() => setDraft(value)} aria-label={`Back to the applied ${label}: ${applied}`} title={`Back to ${applied}`} disabled={disabled}>
            ↺
          </button>
        ) : (
          value !== "" && <ClearButton onClear={() => onCommit(null)} label={label} disabled={disabled} />
        )}
        <span id={`${id}-applied`} className={styles.srOnly}>
          {`Applied: ${applied}.`}
        </span>
        <select
          className={styles.presetSelect}
          aria-label={`${label} preset`}
          value={datePresetOf(value)?.expression ?? ""}
          disabled={disabled}
          onChange={(e) => {
            if (e.target.value !== "") onCommit(e.target.value);
          }}
        >
          <option value="" disabled>
            Presets
          </option>
          {DATE_PRESETS.map((preset) => (
            <option key={preset.expression} value={preset.expression}>
              {preset.label}
            </option>
          ))}
        </select>
      </div>
      {range ? (
        <div className={styles.inputRow}>
          <input type="date" className={styles.dateInput} aria-label={`${label} from`} value={days.from} max={days.to || undefined} disabled={disabled} onChange={(e) => pick(e.target.value, days.to)} />
          <span aria-hidden="true">–</span>
          <input type="date" className={styles.dateInput} aria-label={`${label} to`} value={days.to} min={days.from || undefined} disabled={disabled} onChange={(e) => pick(days.from, e.target.value)} />
        </div>
      ) : (
        <div className={styles.inputRow}>
          <input
            type="date"
            className={styles.dateInput}
            aria-label={`${label} day`}
            value={days.from !== "" && days.from === days.to ? days.from : ""}
            disabled={disabled}
            onChange={(e) => onCommit(e.target.value === "" ? null : e.target.value)}
          />
        </div>
      )}
    </>
  );
}
