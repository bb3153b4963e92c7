import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DateExpressionError, previousAlignedPeriod, resolveDateExpression } from "./dates";

// Wednesday 18 March 2026, 10:00 UTC (11:00 in Berlin, 03:00 in Los Angeles).
const now = new Date("2026-03-18T10:00:00Z");
const utc = { now, timeZone: "UTC" };
const iso = (range: { from?: Date; to?: Date }) => ({ from: range.from?.toISOString(), to: range.to?.toISOString() });

describe("resolveDateExpression", () => {
  it.each([
    ["2026-02-10", "2026-02-10T00:00:00.000Z", "2026-02-11T00:00:00.000Z"],
    ["2026-02-10 to 2026-02-12", "2026-02-10T00:00:00.000Z", "2026-02-13T00:00:00.000Z"],
    ["today", "2026-03-18T00:00:00.000Z", "2026-03-19T00:00:00.000Z"],
    ["  Yesterday ", "2026-03-17T00:00:00.000Z", "2026-03-18T00:00:00.000Z"],
    ["3 days ago", "2026-03-15T00:00:00.000Z", "2026-03-16T00:00:00.000Z"],
    ["1 day ago", "2026-03-17T00:00:00.000Z", "2026-03-18T00:00:00.000Z"],
    ["this week", "2026-03-16T00:00:00.000Z", "2026-03-23T00:00:00.000Z"],
    ["last week", "2026-03-09T00:00:00.000Z", "2026-03-16T00:00:00.000Z"],
    ["this month", "2026-03-01T00:00:00.000Z", "2026-04-01T00:00:00.000Z"],
    ["last month", "2026-02-01T00:00:00.000Z", "2026-03-01T00:00:00.000Z"],
    ["last year", "2025-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z"],
    ["last 7 days", "2026-03-12T00:00:00.000Z", "2026-03-19T00:00:00.000Z"],
    ["last 30 days", "2026-02-17T00:00:00.000Z", "2026-03-19T00:00:00.000Z"],
    ["before 2026-01-01", undefined, "2026-01-01T00:00:00.000Z"],
    ["after 2026-01-01", "2026-01-02T00:00:00.000Z", undefined],
    ["since 2026-01-01", "2026-01-01T00:00:00.000Z", undefined],
    ["since March 3", "2026-03-03T00:00:00.000Z", undefined],
    ["yesterday to today", "2026-03-17T00:00:00.000Z", "2026-03-19T00:00:00.000Z"],
    ["March 3", "2026-03-03T00:00:00.000Z", "2026-03-04T00:00:00.000Z"],
  ])("%s in UTC", (input, from, to) => {
    expect(iso(resolveDateExpression(input, utc))).toEqual({ from, to });
  });

  it("uses the organization's time zone for days and periods", () => {
    expect(iso(resolveDateExpression("today", { now, timeZone: "Europe/Berlin" }))).toEqual({ from: "2026-03-17T23:00:00.000Z", to: "2026-03-18T23:00:00.000Z" });
    // 03:00 in Los Angeles is still the 18th; at 02:00 UTC it is the 17th there.
    expect(iso(resolveDateExpression("today", { now: new Date("2026-03-18T02:00:00Z"), timeZone: "America/Los_Angeles" }))).toEqual({
      from: "2026-03-17T07:00:00.000Z",
      to: "2026-03-18T07:00:00.000Z",
    });
    // The month of the DST change in Europe: starts at UTC+1, ends at UTC+2.
    expect(iso(resolveDateExpression("this month", { now, timeZone: "Europe/Berlin" }))).toEqual({
      from: "2026-02-28T23:00:00.000Z",
      to: "2026-03-31T22:00:00.000Z",
    });
  });

  it.each(["", "soon", "2026-02-30", "2026-13-01", "2026-03-10 to 2026-03-01", "last 0 days", "999999 days ago", "x".repeat(300), "before", "March 3 to"])(
    "rejects %j with a message naming the input",
    (input) => {
      expect(() => resolveDateExpression(input, utc)).toThrow(DateExpressionError);
    },
  );

  it("rejects an unknown time zone", () => {
    expect(() => resolveDateExpression("today", { now, timeZone: "Mars/Olympus" })).toThrow(/unknown time zone "Mars\/Olympus"/);
  });
});

const zones = fc.constantFrom("UTC", "Europe/Berlin", "America/Los_Angeles", "Asia/Kolkata", "Australia/Lord_Howe", "America/Santiago", "Pacific/Apia");
const day = fc.date({ min: new Date("1971-01-01T00:00:00Z"), max: new Date("2099-12-31T00:00:00Z"), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
const instant = fc.date({ min: new Date("1980-01-01T00:00:00Z"), max: new Date("2090-01-01T00:00:00Z"), noInvalidDate: true });
const local = (date: Date, timeZone: string) =>
  new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(date);

describe("date properties", () => {
  it("any text resolves to a range or fails with DateExpressionError", () => {
    const words = fc.constantFrom("today", "yesterday", "to", "before", "after", "since", "last", "this", "week", "month", "days", "ago", "3", "2026-01-05", "march", "-", " ");
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 40 }), fc.array(words, { maxLength: 6 }).map((w) => w.join(" "))), (text) => {
        try {
          const range = resolveDateExpression(text, utc);
          if (range.from && range.to) expect(range.from.getTime()).toBeLessThan(range.to.getTime());
        } catch (error) {
          expect(error).toBeInstanceOf(DateExpressionError);
        }
      }),
      { numRuns: 1500 },
    );
  });

  it("a YYYY-MM-DD day starts at local midnight (or the first instant of the day) and lasts 23 to 25 hours", () => {
    fc.assert(
      fc.property(day, zones, (d, timeZone) => {
        const { from, to } = resolveDateExpression(d, { now, timeZone });
        const hours = (to!.getTime() - from!.getTime()) / 3_600_000;
        expect(hours).toBeGreaterThanOrEqual(23);
        expect(hours).toBeLessThanOrEqual(25);
        expect(local(from!, timeZone).slice(0, 10)).toBe(d);
        expect(local(new Date(from!.getTime() - 1), timeZone).slice(0, 10) < d).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it("today contains now, and ranges compose: 'a to b' spans from a's start to b's end", () => {
    fc.assert(
      fc.property(instant, zones, day, day, (at, timeZone, a, b) => {
        const context = { now: at, timeZone };
        const today = resolveDateExpression("today", context);
        expect(today.from!.getTime()).toBeLessThanOrEqual(at.getTime());
        expect(today.to!.getTime()).toBeGreaterThan(at.getTime());
        const [first, last] = a <= b ? [a, b] : [b, a];
        expect(resolveDateExpression(`${first} to ${last}`, context)).toEqual({
          from: resolveDateExpression(first, context).from,
          to: resolveDateExpression(last, context).to,
        });
        expect(resolveDateExpression("this week", context).from!.getTime()).toBeLessThanOrEqual(today.from!.getTime());
        expect(resolveDateExpression("last month", context).to).toEqual(resolveDateExpression("this month", context).from);
      }),
      { numRuns: 300 },
    );
  });
});

describe("date expression length", () => {
  it("refuses a long expression before parsing it, with a clear message", () => {
    const long = "march 3 ".repeat(25).slice(0, 200);
    expect(() => resolveDateExpression(long, utc)).toThrow(/at most 64 characters/);
    // Within the cap, but longer than any form chrono is asked to read: not a date, quickly.
    expect(() => resolveDateExpression("- noon ".repeat(8), utc)).toThrow(DateExpressionError);
    expect(iso(resolveDateExpression("2026-02-10 to 2026-02-12", utc)).from).toBe("2026-02-10T00:00:00.000Z");
  });
});

describe("previousAlignedPeriod", () => {
  it("shifts a span back one day, ISO week or calendar month, clamping the day of the month", () => {
    expect(previousAlignedPeriod({ from: "2025-03-01", to: "2025-03-02" }, "day")).toBe("2025-02-28 to 2025-02-28");
    expect(previousAlignedPeriod({ from: "2025-03-03", to: "2025-03-10" }, "week")).toBe("2025-02-24 to 2025-03-02");
    // A whole month maps to the whole previous month, a month-to-date span to the same days of the month before.
    expect(previousAlignedPeriod({ from: "2025-03-01", to: "2025-04-01" }, "month")).toBe("2025-02-01 to 2025-02-28");
    expect(previousAlignedPeriod({ from: "2024-03-01", to: "2024-03-16" }, "month")).toBe("2024-02-01 to 2024-02-15");
    expect(previousAlignedPeriod({ from: "2025-03-31", to: "2025-04-01" }, "month")).toBe("2025-02-28 to 2025-02-28");
    expect(previousAlignedPeriod({ from: "2025-03-30", to: "2025-03-31" }, "month")).toBe("2025-02-28 to 2025-02-28");
    expect(previousAlignedPeriod({ from: "2025-01-01", to: "2025-02-01" }, "month")).toBe("2024-12-01 to 2024-12-31");
  });
});
