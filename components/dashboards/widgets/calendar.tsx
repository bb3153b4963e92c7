"use client";

import { useRef, useState } from "react";
import { resolveDateExpression, type DateRange } from "@/lib/query/dates";
import { describeDateExpression, joinDateRange } from "@/lib/dashboards/filter-values";
import styles from "./widgets.module.css";

interface CalendarProps {
  id: string;
  /** A date expression; the days it covers are highlighted. */
  value: string;
  onCommit: (value: unknown) => void;
  timeZone: string;
  disabled: boolean;
}

const WEEKDAYS = ["Mo", "Tu", "We", "Th", "Fr", "Sa", "Su"];

function isoDay(year: number, month: number, day: number): string {
  const d = new Date(Date.UTC(2000, month - 1, day));
  d.setUTCFullYear(year);
  return d.toISOString().slice(0, 10);
}

function todayIn(timeZone: string): string {
  // en-CA formats dates as YYYY-MM-DD.
  return new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date());
}

function rangeOf(value: string, timeZone: string): DateRange | null {
  if (value.trim() === "") return null;
  try {
    return resolveDateExpression(value, { now: new Date(), timeZone });
  } catch {
    return null;
  }
}

/** The 6×7 days shown for a month, Monday first. */
function monthGrid(year: number, month: number): string[] {
  const first = new Date(Date.UTC(year, month - 1, 1));
  const lead = (first.getUTCDay() + 6) % 7;
  return Array.from({ length: 42 }, (_, i) => isoDay(year, month, 1 - lead + i));
}

/**
 * A month calendar: click a day to filter on it, shift-click (or Shift+Enter) to extend the
 * selection into a range. Arrow keys move between days, PageUp/PageDown between months.
 * Whatever the current expression covers ("last month", typed elsewhere, the default) is
 * highlighted.
 */
export function Calendar({ id, value, onCommit, timeZone, disabled }: CalendarProps) {
  const range = rangeOf(value, timeZone);
  const today = todayIn(timeZone);
  const startDay = range?.from ? new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(range.from) : today;
  const [focus, setFocus] = useState(startDay);
  const [anchor, setAnchor] = useState<string | null>(null);
  const grid = useRef<HTMLDivElement>(null);
  const [year, month] = focus.split("-").map(Number);
  const days = monthGrid(year, month);
  const inRange = (day: string) => {
    if (!range) return false;
    const midnight = resolveDateExpression(day, { now: new Date(), timeZone }).from?.getTime() ?? 0;
    return (range.from === undefined || midnight >= range.from.getTime()) && (range.to === undefined || midnight < range.to.getTime());
  };
  const choose = (day: string, extend: boolean) => {
    if (extend && anchor) {
      const [from, to] = anchor <= day ? [anchor, day] : [day, anchor];
      onCommit(joinDateRange(from, to));
    } else {
      setAnchor(day);
      onCommit(day);
    }
  };
  const move = (day: string) => {
    setFocus(day);
    // Focus follows after React has rendered the (possibly new) month.
    requestAnimationFrame(() => grid.current?.querySelector<HTMLButtonElement>(`[data-day="${day}"]`)?.focus());
  };
  const shift = (day: string, days: number) => {
    const [y, m, d] = day.split("-").map(Number);
    return isoDay(y, m, d + days);
  };
  const shiftMonth = (day: string, months: number) => {
    const [y, m, d] = day.split("-").map(Number);
    const index = y * 12 + (m - 1) + months;
    const ty = Math.floor(index / 12);
    const tm = (index % 12) + 1;
    const last = new Date(Date.UTC(2000, tm, 0)).getUTCDate();
    return isoDay(ty, tm, Math.min(d, last));
  };
  const monthName = new Intl.DateTimeFormat("en-US", { month: "long", year: "numeric", timeZone: "UTC" }).format(new Date(`${isoDay(year, month, 1)}T12:00:00Z`));
  const resolved = value.trim() === "" ? null : describeDateExpression(value, timeZone);
  return (
    <div className={styles.calendar}>
      <div className={styles.calendarHead}>
        <button type="button" className={styles.pagerButton} onClick={() => setFocus(shiftMonth(focus, -1))} aria-label="Previous month" disabled={disabled}>
          ‹
        </button>
        <span aria-live="polite" className={styles.calendarMonth}>
          {monthName}
        </span>
        <button type="button" className={styles.pagerButton} onClick={() => setFocus(shiftMonth(focus, 1))} aria-label="Next month" disabled={disabled}>
          ›
        </button>
      </div>
      <div ref={grid} role="grid" aria-labelledby={`${id}-label`} className={styles.calendarGrid}>
        <div role="row" className={styles.calendarRow}>
          {WEEKDAYS.map((d) => (
            <span role="columnheader" key={d} className={styles.calendarWeekday}>
              {d}
            </span>
          ))}
        </div>
        {Array.from({ length: 6 }, (_, week) => (
          <div role="row" key={week} className={styles.calendarRow}>
            {days.slice(week * 7, week * 7 + 7).map((day) => {
              const selected = inRange(day);
              const outside = Number(day.slice(5, 7)) !== month;
              return (
                <span role="gridcell" key={day} aria-selected={selected}>
                  <button
                    type="button"
                    data-day={day}
                    tabIndex={day === focus ? 0 : -1}
                    disabled={disabled}
                    className={`${styles.day} ${selected ? styles.daySelected : ""} ${outside ? styles.dayOutside : ""} ${day === today ? styles.dayToday : ""}`}
                    aria-label={day}
                    onClick={(e) => {
                      setFocus(day);
                      choose(day, e.shiftKey);
                    }}
                    onKeyDown={(e) => {
                      const step = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -7, ArrowDown: 7 }[e.key];
                      if (step !== undefined) {
                        e.preventDefault();
                        move(shift(day, step));
                      } else if (e.key === "PageUp" || e.key === "PageDown") {
                        e.preventDefault();
                        move(shiftMonth(day, e.key === "PageUp" ? -1 : 1));
                      } else if (e.key === "Enter" && e.shiftKey) {
                        e.preventDefault();
                        choose(day, true);
                      }
                    }}
                  >
                    {Number(day.slice(8))}
                  </button>
                </span>
              );
            })}
          </div>
        ))}
      </div>
      <div className={styles.inputRow}>
        <p className={resolved && !resolved.ok ? styles.invalid : styles.hint}>{resolved === null ? "All dates · shift-click for a range" : resolved.ok ? `${value} · ${resolved.text}` : resolved.error}</p>
        {value !== "" && (
          <button type="button" className={styles.clearButton} onClick={() => onCommit(null)} aria-label="Clear date" disabled={disabled}>
            ×
          </button>
        )}
      </div>
    </div>
  );
}
