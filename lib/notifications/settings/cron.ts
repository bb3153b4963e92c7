import { CronExpressionParser } from "cron-parser";

/**
 * Five-field cron expressions, read in an IANA time zone (UTC unless said): alert rules run in UTC,
 * report schedules in the zone their creator chose (a 08:00 report stays at 08:00 local across DST).
 */

/** Error text when `expr` is not a valid five-field cron expression, else null. */
export function cronError(expr: string, tz = "UTC"): string | null {
  const fields = expr.trim().split(/\s+/);
  if (fields.length !== 5) return `Expected five fields (minute hour day-of-month month day-of-week), got ${fields.length}`;
  try {
    CronExpressionParser.parse(expr, { tz, strict: false });
    return null;
  } catch (error) {
    return `Invalid cron expression: ${(error as Error).message}`;
  }
}

/** The next `count` occurrences strictly after `after`. */
export function nextRuns(expr: string, after: Date, count = 5, tz = "UTC"): Date[] {
  const it = CronExpressionParser.parse(expr, { tz, currentDate: after });
  return it.take(count).map((d) => d.toDate());
}

/** The latest occurrence at or before `at`, or null when there is none after `notBefore`. */
export function latestDue(expr: string, at: Date, notBefore: Date, tz = "UTC"): Date | null {
  const it = CronExpressionParser.parse(expr, { tz, currentDate: new Date(at.getTime() + 1) });
  const prev = it.prev().toDate();
  return prev.getTime() > notBefore.getTime() ? prev : null;
}
