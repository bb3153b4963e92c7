import { CronExpressionParser } from "cron-parser";

/** Error text when `expr` is not a valid five-field cron expression (UTC), else null. */
export function cronError(expr: string): string | null {
  const fields = expr.trim().split(/\s+/);
  if (fields.length !== 5) return `Expected five fields (minute hour day-of-month month day-of-week), got ${fields.length}`;
  try {
    CronExpressionParser.parse(expr, { tz: "UTC", strict: false });
    return null;
  } catch (error) {
    return `Invalid cron expression: ${(error as Error).message}`;
  }
}

/** The next `count` occurrences strictly after `after`. */
export function nextRuns(expr: string, after: Date, count = 5): Date[] {
  const it = CronExpressionParser.parse(expr, { tz: "UTC", currentDate: after });
  return it.take(count).map((d) => d.toDate());
}

/** The latest occurrence at or before `at`, or null when there is none after `notBefore`. */
export function latestDue(expr: string, at: Date, notBefore: Date): Date | null {
  const it = CronExpressionParser.parse(expr, { tz: "UTC", currentDate: new Date(at.getTime() + 1) });
  const prev = it.prev().toDate();
  return prev.getTime() > notBefore.getTime() ? prev : null;
}
