import { Invalid } from "@/lib/errors";

/** The column types a loaded table can have (PostgreSQL: text, int8, numeric, boolean, date, timestamptz). */
export const COLUMN_TYPES = ["text", "integer", "numeric", "boolean", "date", "timestamptz"] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];

/** A value that does not fit its column's type; `value` is the text as read. */
export class CellValueError extends Invalid {
  constructor(
    readonly type: ColumnType,
    readonly value: string,
  ) {
    super(`${JSON.stringify(value.length > 100 ? `${value.slice(0, 100)}…` : value)} is not ${TYPE_NOUNS[type]}`);
  }
}

const TYPE_NOUNS: Record<ColumnType, string> = {
  text: "text",
  integer: "an integer (-9223372036854775808 to 9223372036854775807, no leading zeros)",
  numeric: "a number (like -12.5 or 1.2e3)",
  boolean: "a boolean (true/false, t/f, yes/no, y/n)",
  date: "a date (YYYY-MM-DD or YYYY/MM/DD)",
  timestamptz: "a timestamp (ISO 8601: YYYY-MM-DD HH:MM[:SS[.fraction]] with an optional zone such as Z or +02:00)",
};

// Leading zeros make a value an identifier (a zip code, an account number), not a number.
const INTEGER = /^[+-]?(0|[1-9][0-9]*)$/;
const NUMERIC = /^[+-]?(0|[1-9][0-9]*)?(\.[0-9]*)?([eE][+-]?[0-9]{1,4})?$/;
const INT8_MAX = 9223372036854775807n;
const INT8_MIN = -9223372036854775808n;
const TRUE_WORDS = new Set(["true", "t", "yes", "y"]);
const FALSE_WORDS = new Set(["false", "f", "no", "n"]);
const DATE = /^([0-9]{4})([-/])([0-9]{2})\2([0-9]{2})$/;
const TIMESTAMP = /^([0-9]{4})-([0-9]{2})-([0-9]{2})[T ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(\.[0-9]{1,9})?)?\s*(Z|[+-][0-9]{2}(?::?[0-9]{2})?)?$/i;

function canonicalInteger(text: string): string | undefined {
  if (!INTEGER.test(text)) return undefined;
  const digits = text.replace(/^\+/, "");
  if (digits.replace("-", "").length >= 19) {
    const value = BigInt(digits);
    if (value > INT8_MAX || value < INT8_MIN) return undefined;
  }
  return digits === "-0" ? "0" : digits;
}

function canonicalNumeric(text: string): string | undefined {
  // The pattern allows "", "." and "+e5": at least one digit before the exponent is required.
  if (!NUMERIC.test(text) || !/[0-9]/.test(text.replace(/[eE].*$/, ""))) return undefined;
  return text.replace(/^\+/, "");
}

function canonicalBoolean(text: string): string | undefined {
  const word = text.toLowerCase();
  if (TRUE_WORDS.has(word)) return "true";
  if (FALSE_WORDS.has(word)) return "false";
  return undefined;
}

function isCalendarDate(year: number, month: number, day: number): boolean {
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const days = [31, year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return day <= days[month - 1];
}

function canonicalDate(text: string): string | undefined {
  const match = DATE.exec(text);
  if (!match) return undefined;
  const [, year, , month, day] = match;
  return isCalendarDate(Number(year), Number(month), Number(day)) ? `${year}-${month}-${day}` : undefined;
}

/**
 * A timestamp in PostgreSQL's ISO form. Without a zone the text keeps none, so PostgreSQL reads it in
 * the session's time zone: the loader sets it to the organization's (README.md).
 */
function canonicalTimestamp(text: string): string | undefined {
  // A date alone is midnight in the organization's time zone.
  const date = canonicalDate(text);
  if (date !== undefined) return date;
  const match = TIMESTAMP.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second = "00", fraction = "", zone] = match;
  if (!isCalendarDate(Number(year), Number(month), Number(day)) || Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return undefined;
  let offset = "";
  if (zone) {
    if (zone.toUpperCase() === "Z") offset = "+00:00";
    else {
      const digits = zone.slice(1).replace(":", "");
      const hours = Number(digits.slice(0, 2));
      const minutes = digits.length > 2 ? Number(digits.slice(2)) : 0;
      if (hours > 15 || minutes > 59) return undefined;
      offset = `${zone[0]}${digits.slice(0, 2)}:${digits.length > 2 ? digits.slice(2) : "00"}`;
    }
  }
  return `${year}-${month}-${day} ${hour}:${minute}:${second}${fraction}${offset}`;
}

const CANONICAL: Record<Exclude<ColumnType, "text">, (text: string) => string | undefined> = {
  integer: canonicalInteger,
  numeric: canonicalNumeric,
  boolean: canonicalBoolean,
  date: canonicalDate,
  timestamptz: canonicalTimestamp,
};

/**
 * The canonical PostgreSQL text of `text` as a value of `type`, or undefined when it is not one.
 * Surrounding whitespace is ignored for every type but text. The one rule behind both inference and
 * loading: a column is inferred as a type only when every value passes here.
 */
export function tryParseCell(type: ColumnType, text: string): string | undefined {
  return type === "text" ? text : CANONICAL[type](text.trim());
}

/** `tryParseCell`, or a CellValueError naming the value. */
export function parseCell(type: ColumnType, text: string): string {
  const canonical = tryParseCell(type, text);
  if (canonical === undefined) throw new CellValueError(type, text);
  return canonical;
}

/** Types a value can be, as bits; the order of INFERRED is the preference when several remain. */
const INFERRED: Exclude<ColumnType, "text">[] = ["boolean", "integer", "numeric", "date", "timestamptz"];
const ALL = (1 << INFERRED.length) - 1;
/** A value that is the first type is the second too (an integer is a number, a date a midnight): not parsed twice. */
const IMPLIES = INFERRED.map((type) => (type === "integer" ? 1 << INFERRED.indexOf("numeric") : type === "date" ? 1 << INFERRED.indexOf("timestamptz") : 0));

/**
 * Infers each column's type from every value of the file, in constant memory: a column is the first
 * of boolean, integer, numeric, date, timestamptz that all its non-null values parse as (`tryParseCell`),
 * text otherwise; a column with no value at all is text. Rule and examples: docs/data.md.
 */
export class TypeInference {
  private readonly possible: number[];
  private readonly seen: boolean[];

  constructor(readonly columnCount: number) {
    this.possible = new Array<number>(columnCount).fill(ALL);
    this.seen = new Array<boolean>(columnCount).fill(false);
  }

  observe(row: readonly (string | null)[]): void {
    for (let column = 0; column < this.columnCount; column++) {
      const value = row[column];
      if (value === null || value === undefined) continue;
      this.seen[column] = true;
      let possible = this.possible[column];
      if (possible === 0) continue;
      const trimmed = value.trim();
      let implied = 0;
      for (let bit = 0; bit < INFERRED.length; bit++) {
        const mask = 1 << bit;
        if (!(possible & mask) || implied & mask) continue;
        if (CANONICAL[INFERRED[bit]](trimmed) === undefined) possible &= ~mask;
        else implied |= IMPLIES[bit];
      }
      this.possible[column] = possible;
    }
  }

  result(): ColumnType[] {
    return this.possible.map((possible, column) => {
      if (!this.seen[column]) return "text";
      const bit = INFERRED.findIndex((_, index) => possible & (1 << index));
      return bit === -1 ? "text" : INFERRED[bit];
    });
  }
}
