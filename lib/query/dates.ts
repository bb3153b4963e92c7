import * as chrono from "chrono-node/en";

/**
 * Date filter values (SPEC §2.5 rule 5) resolved to half-open UTC ranges [from, to).
 * Days are calendar days in the organization's time zone; `from`/`to` are the UTC
 * instants of those local midnights. A missing bound means unbounded on that side.
 * The forms and their ranges are listed in docs/dashboards-engine.md.
 */
export interface DateRange {
  from?: Date;
  to?: Date;
}

export interface DateContext {
  now: Date;
  /** IANA zone of the organization, e.g. "Europe/Berlin". */
  timeZone: string;
}

export class DateExpressionError extends Error {
  constructor(readonly input: string, reason?: string) {
    super(
      reason ??
        `cannot read "${input.slice(0, 80)}" as a date; use YYYY-MM-DD, "<date> to <date>", today, yesterday, ` +
          `"<n> days ago", "last <n> days", this week, last week, this month, last month, this year, last year, ` +
          `"before <date>", "after <date>" or "since <date>"`,
    );
    this.name = "DateExpressionError";
  }
}

/**
 * Checked before any parsing. The longest fixed form ("YYYY-MM-DD to YYYY-MM-DD") has 24
 * characters. What reaches chrono is capped tighter still: chrono's time-unit patterns are
 * large regular expressions that V8 compiles to native code on first heavy use (about 300 ms of
 * CPU for a 200-character input of repeated "march 3" or "- noon", measured), and their cost
 * grows with the input. Day names and "3 weeks ago" fit in 32 characters.
 */
export const MAX_DATE_EXPRESSION_LENGTH = 64;
const MAX_CHRONO_LENGTH = 32;
const MAX_DAYS = 100_000;

/** A calendar day, independent of any zone. */
interface CivilDay {
  year: number;
  month: number; // 1-12
  day: number;
}

export function resolveDateExpression(input: string, context: DateContext): DateRange {
  if (typeof input !== "string" || input.length > MAX_DATE_EXPRESSION_LENGTH) {
    throw new DateExpressionError(String(input).slice(0, 80), `a date expression is a string of at most ${MAX_DATE_EXPRESSION_LENGTH} characters`);
  }
  const text = input.trim().toLowerCase().replace(/\s+/g, " ");
  const zone = checkZone(context.timeZone);
  const today = civilDayIn(context.now, zone);
  const start = (day: CivilDay) => zonedMidnight(day, zone);
  const dayRange = (day: CivilDay): DateRange => ({ from: start(day), to: start(addDays(day, 1)) });

  const range = / to /.exec(text);
  if (range) {
    const first = resolveDay(text.slice(0, range.index), today, context, input);
    const last = resolveDay(text.slice(range.index + 4), today, context, input);
    if (compareDays(first, last) > 0) throw new DateExpressionError(input, `"${input}" ends before it starts`);
    return { from: start(first), to: start(addDays(last, 1)) };
  }
  const bounded = /^(before|after|since) (.+)$/.exec(text);
  if (bounded) {
    const day = resolveDay(bounded[2], today, context, input);
    if (bounded[1] === "before") return { to: start(day) };
    // "after D" excludes D itself; "since D" includes it.
    return { from: start(bounded[1] === "after" ? addDays(day, 1) : day) };
  }
  const rolling = /^(?:last|past) (\d{1,6}) days?$/.exec(text);
  if (rolling) {
    const n = checkCount(Number(rolling[1]), input);
    if (n === 0) throw new DateExpressionError(input, `"${input}" covers no days`);
    // The n days ending today, today included.
    return { from: start(addDays(today, 1 - n)), to: start(addDays(today, 1)) };
  }
  const period = /^(this|last|next) (week|month|year)$/.exec(text);
  if (period) {
    const shift = period[1] === "this" ? 0 : period[1] === "last" ? -1 : 1;
    const [first, next] = calendarPeriod(today, period[2] as "week" | "month" | "year", shift);
    return { from: start(first), to: start(next) };
  }
  return dayRange(resolveDay(text, today, context, input));
}

/** One calendar day: YYYY-MM-DD, today, yesterday, tomorrow, "<n> days ago", or whatever chrono reads as a single date. */
function resolveDay(raw: string, today: CivilDay, context: DateContext, input: string): CivilDay {
  const text = raw.trim();
  const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (iso) {
    const day = { year: Number(iso[1]), month: Number(iso[2]), day: Number(iso[3]) };
    const check = addDays(day, 0);
    if (check.year !== day.year || check.month !== day.month || check.day !== day.day) throw new DateExpressionError(input, `"${text}" is not a calendar date`);
    return day;
  }
  if (text === "today") return today;
  if (text === "yesterday") return addDays(today, -1);
  if (text === "tomorrow") return addDays(today, 1);
  const ago = /^(\d{1,6}) days? ago$/.exec(text);
  if (ago) return addDays(today, -checkCount(Number(ago[1]), input));
  if (text === "" || text.length > MAX_CHRONO_LENGTH) throw new DateExpressionError(input);

  // The forgiving rest ("march 3", "3 weeks ago", "last friday"): chrono reads it against the zone's wall clock.
  const offset = zoneOffsetMinutes(context.now, context.timeZone);
  const results = chrono.parse(text, { instant: context.now, timezone: offset }, { forwardDate: false });
  const result = results[0];
  if (!result || result.index !== 0 || result.text.length !== text.length || result.end) throw new DateExpressionError(input);
  const date = result.start;
  return { year: date.get("year") ?? today.year, month: date.get("month") ?? today.month, day: date.get("day") ?? today.day };
}

function checkCount(n: number, input: string): number {
  if (n > MAX_DAYS) throw new DateExpressionError(input, `"${input}" reaches more than ${MAX_DAYS} days`);
  return n;
}

function calendarPeriod(today: CivilDay, unit: "week" | "month" | "year", shift: number): [CivilDay, CivilDay] {
  if (unit === "week") {
    // ISO weeks start on Monday.
    const weekday = (new Date(Date.UTC(today.year, today.month - 1, today.day)).getUTCDay() + 6) % 7;
    const monday = addDays(today, -weekday + 7 * shift);
    return [monday, addDays(monday, 7)];
  }
  if (unit === "month") {
    const first = addMonths({ year: today.year, month: today.month, day: 1 }, shift);
    return [first, addMonths(first, 1)];
  }
  return [{ year: today.year + shift, month: 1, day: 1 }, { year: today.year + shift + 1, month: 1, day: 1 }];
}

function addDays(day: CivilDay, n: number): CivilDay {
  const d = new Date(Date.UTC(day.year, day.month - 1, day.day + n));
  // Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear does not.
  if (day.year < 100) d.setUTCFullYear(day.year, day.month - 1, day.day + n);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

function addMonths(day: CivilDay, n: number): CivilDay {
  const index = day.year * 12 + (day.month - 1) + n;
  return { year: Math.floor(index / 12), month: (index % 12) + 1, day: 1 };
}

function compareDays(a: CivilDay, b: CivilDay): number {
  return a.year - b.year || a.month - b.month || a.day - b.day;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function checkZone(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    try {
      formatter = new Intl.DateTimeFormat("en-US", {
        timeZone, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric", era: "short",
      });
    } catch {
      throw new DateExpressionError(timeZone, `unknown time zone "${timeZone}"`);
    }
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The wall clock of an instant in a zone, as if it were UTC. */
function wallClock(instant: number, zone: Intl.DateTimeFormat): number {
  const parts = Object.fromEntries(zone.formatToParts(new Date(instant)).map((p) => [p.type, p.value]));
  const year = parts.era === "BC" ? 1 - Number(parts.year) : Number(parts.year);
  const d = new Date(Date.UTC(2000, Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second)));
  d.setUTCFullYear(year);
  return d.getTime();
}

function civilDayIn(now: Date, zone: Intl.DateTimeFormat): CivilDay {
  const wall = new Date(wallClock(now.getTime(), zone));
  return { year: wall.getUTCFullYear(), month: wall.getUTCMonth() + 1, day: wall.getUTCDate() };
}

function zoneOffsetMinutes(now: Date, timeZone: string): number {
  return Math.round((wallClock(now.getTime(), checkZone(timeZone)) - now.getTime()) / 60_000);
}

/** The UTC instant at which a calendar day starts in a zone (DST-aware: the offset is re-read at the result). */
function zonedMidnight(day: CivilDay, zone: Intl.DateTimeFormat): Date {
  const d = new Date(Date.UTC(2000, day.month - 1, day.day));
  d.setUTCFullYear(day.year);
  const target = d.getTime();
  let guess = target - (wallClock(target, zone) - target);
  // At most two corrections settle a DST transition near midnight.
  for (let i = 0; i < 2; i++) {
    const error = wallClock(guess, zone) - target;
    if (error === 0) break;
    guess -= error;
  }
  // Where midnight does not exist (a zone skipping 00:00-01:00), the day starts at the first instant after it.
  if (wallClock(guess, zone) < target) guess += 3_600_000;
  return new Date(guess);
}

/** The calendar day (`YYYY-MM-DD`) it is at `now` in the zone. */
export function todayIn(now: Date, timeZone: string): string {
  const day = civilDayIn(now, checkZone(timeZone));
  return `${day.year}-${String(day.month).padStart(2, "0")}-${String(day.day).padStart(2, "0")}`;
}

/**
 * The calendar day (`YYYY-MM-DD`) that starts at `instant` in the zone, or undefined when the
 * instant is not a day's start there. Every bound resolveDateExpression returns is one.
 */
export function dayStartingAt(instant: Date, timeZone: string): string | undefined {
  const zone = checkZone(timeZone);
  const day = civilDayIn(instant, zone);
  if (zonedMidnight(day, zone).getTime() !== instant.getTime()) return undefined;
  const d = new Date(Date.UTC(2000, day.month - 1, day.day));
  d.setUTCFullYear(day.year);
  return day.year >= 1 && day.year <= 9999 ? d.toISOString().slice(0, 10) : undefined;
}

/**
 * The instant a cell value stands for, for date filters applied in memory: a `YYYY-MM-DD`
 * day is its local midnight in the zone (as PostgreSQL does with TimeZone set to it), an
 * ISO timestamp is itself; anything else is not a date.
 */
export function cellInstant(value: unknown, timeZone: string): number | null {
  if (value instanceof Date) return value.getTime();
  if (typeof value !== "string") return null;
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (day) return zonedMidnight({ year: Number(day[1]), month: Number(day[2]), day: Number(day[3]) }, checkZone(timeZone)).getTime();
  if (!/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(value)) return null;
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : t;
}

/**
 * The same span of days one day, ISO week or calendar month earlier: the previous aligned period of a change
 * alert (lib/alerts). `from` and `to` are calendar days (`YYYY-MM-DD`), `to` exclusive, as dayStartingAt gives
 * them. A month back keeps the day of the month, clamped to the shorter month's last day (March 31 → February 28),
 * so a whole month maps to the whole previous month and a month-to-date span to the same days of the month before;
 * a span that clamping would empty keeps one day. Answers a date expression the engine reads ("<day> to <day>").
 */
export function previousAlignedPeriod(range: { from: string; to: string }, unit: "day" | "week" | "month"): string {
  const parse = (text: string): CivilDay => {
    const [year, month, day] = text.split("-").map(Number);
    return { year, month, day };
  };
  const back = (day: CivilDay): CivilDay => {
    if (unit === "day") return addDays(day, -1);
    if (unit === "week") return addDays(day, -7);
    const first = addMonths({ year: day.year, month: day.month, day: 1 }, -1);
    const lastOfMonth = addDays(addMonths(first, 1), -1).day;
    return { ...first, day: Math.min(day.day, lastOfMonth) };
  };
  const format = (day: CivilDay) => `${String(day.year).padStart(4, "0")}-${String(day.month).padStart(2, "0")}-${String(day.day).padStart(2, "0")}`;
  const from = back(parse(range.from));
  const to = back(parse(range.to));
  const last = compareDays(to, from) > 0 ? addDays(to, -1) : from;
  return `${format(from)} to ${format(last)}`;
}
