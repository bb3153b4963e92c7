import { describe, expect, it } from "vitest";
import { columnDecimals, columnFormatter, cronInWords, formatCell, formatFixed, formatInstant, formatKpiValue, formatValue, humanize, kpiDelta, kpiValueFormat, toNumber } from "./format";

describe("toNumber", () => {
  it("reads numbers and numeric strings (numeric and bigint columns arrive as either)", () => {
    expect(toNumber(12.5)).toBe(12.5);
    expect(toNumber("1234.50")).toBe(1234.5);
    expect(toNumber(" -3e2 ")).toBe(-300);
    expect(toNumber("12 apples")).toBeNull();
    expect(toNumber("")).toBeNull();
    expect(toNumber(null)).toBeNull();
    expect(toNumber(Number.NaN)).toBeNull();
    expect(toNumber(Infinity)).toBeNull();
  });
});

describe("humanize", () => {
  it("turns column ids into headings", () => {
    expect(humanize("avg_order")).toBe("Avg order");
    expect(humanize("margin_pct")).toBe("Margin pct");
    expect(humanize("orderDate")).toBe("Order Date");
    expect(humanize("_")).toBe("_");
  });
});

describe("formatCell", () => {
  it("groups numbers, keeps two decimals at most, leaves text alone", () => {
    expect(formatCell(1234567.891)).toBe("1,234,567.89");
    expect(formatCell(null)).toBe("");
    expect(formatCell("Berlin")).toBe("Berlin");
    expect(formatCell({ a: 1 })).toBe('{"a":1}');
  });
});

describe("formatKpiValue", () => {
  it("uses the prefix as the currency symbol, with the requested decimals", () => {
    expect(formatKpiValue(1234567.8, { format: "currency", prefix: "$", decimals: 0 })).toBe("$1,234,568");
    expect(formatKpiValue(1234.5, { format: "currency", prefix: "$" })).toBe("$1,234.50");
  });

  it("puts the sign before the prefix", () => {
    expect(formatKpiValue(-1200, { format: "currency", prefix: "$", decimals: 0 })).toBe("-$1,200");
  });

  it("uses the ISO currency when given", () => {
    expect(formatKpiValue(1234.5, { format: "currency", currency: "EUR" })).toBe("€1,234.50");
    expect(formatKpiValue(99, { format: "currency" })).toBe("$99.00");
  });

  it("reads percent values as percentage points", () => {
    expect(formatKpiValue(35.24, { format: "percent", decimals: 1 })).toBe("35.2%");
    expect(formatKpiValue(35, { format: "percent" })).toBe("35%");
  });

  it("formats plain numbers with prefix and suffix", () => {
    expect(formatKpiValue(95321, { format: "number" })).toBe("95,321");
    expect(formatKpiValue(4.5, { format: "number", suffix: " days", decimals: 2 })).toBe("4.50 days");
    expect(formatKpiValue(3, undefined)).toBe("3");
  });
});

describe("kpiDelta", () => {
  const display = { format: "currency" as const, prefix: "$", delta: { column: "target", mode: "percent" as const, label: "vs target", positive_is_good: true } };

  it("shows the percent change against the comparison column, green when up is good", () => {
    expect(kpiDelta(110, 100, display)).toEqual({ text: "+10%", direction: "up", tone: "good", label: "vs target" });
    expect(kpiDelta(75, 100, display)).toEqual({ text: "−25%", direction: "down", tone: "bad", label: "vs target" });
  });

  it("inverts the colour when a rise is bad", () => {
    const costs = { ...display, delta: { ...display.delta, positive_is_good: false } };
    expect(kpiDelta(110, 100, costs)?.tone).toBe("bad");
    expect(kpiDelta(90, 100, costs)?.tone).toBe("good");
  });

  it("shows absolute changes in the KPI's own format", () => {
    const absolute = { ...display, decimals: 0, delta: { ...display.delta, mode: "absolute" as const } };
    expect(kpiDelta(1500, 1000, absolute)).toMatchObject({ text: "+$500", direction: "up" });
    expect(kpiDelta(800, 1000, absolute)).toMatchObject({ text: "−$200", direction: "down" });
  });

  it("is neutral when the change rounds to zero, and absent without a base", () => {
    expect(kpiDelta(100.01, 100, display)).toMatchObject({ direction: "flat", tone: "neutral" });
    expect(kpiDelta(10, 0, display)).toBeNull();
    expect(kpiDelta(null, 100, display)).toBeNull();
    expect(kpiDelta(10, 100, { format: "number" })).toBeNull();
  });
});

describe("columnDecimals and formatFixed", () => {
  it("shows a column with the most decimals any of its values has, capped", () => {
    expect(columnDecimals([20.4, 20.31, 3])).toBe(2);
    expect(columnDecimals([1, 2, "3"])).toBe(0);
    expect(columnDecimals([0.12345], 2)).toBe(2);
    expect(columnDecimals(["1.5", null, "x"])).toBe(1);
    expect(formatFixed(20.4, 2)).toBe("20.40");
    expect(formatFixed(1234567, 0)).toBe("1,234,567");
  });
});

describe("formatValue", () => {
  it("shows each declared format the same way wherever it is used", () => {
    expect(formatValue(311191.674, { type: "currency" })).toBe("$311,191.67");
    expect(formatValue(-1200, { type: "currency", decimals: 0 })).toBe("-$1,200");
    expect(formatValue(1234.5, { type: "currency", currency: "EUR" })).toBe("€1,234.50");
    expect(formatValue(35.24, { type: "percent" })).toBe("35.2%");
    expect(formatValue(35, { type: "percent", decimals: 1 })).toBe("35.0%");
    expect(formatValue(95321, { type: "number" })).toBe("95,321");
    expect(formatValue(4.567, { type: "number" })).toBe("4.57");
  });

  it("a KPI tile uses its column's declared format over its own display options", () => {
    expect(kpiValueFormat({ format: "number", decimals: 0 }, "currency")).toEqual({ type: "currency" });
    expect(kpiValueFormat({ format: "percent", decimals: 1 }, undefined)).toEqual({ type: "percent", decimals: 1, currency: undefined });
    expect(formatKpiValue(1234.5, { format: "number", decimals: 0 }, { type: "currency", currency: "EUR" })).toBe("€1,234.50");
    // An absolute delta reads in the same format as the figure.
    const display = { format: "number" as const, delta: { column: "target", mode: "absolute" as const, positive_is_good: true } };
    expect(kpiDelta(1100.5, 1000, display, "currency")?.text).toBe("+$100.50");
  });
});

describe("columnFormatter", () => {
  it("reads a column's cells in its declared format, an undeclared id as stored, other numbers with the decimals the column needs", () => {
    const ids = columnFormatter("order_id", [1000061794, 1000061795], undefined);
    expect(ids(1000061794)).toBe("1000061794");
    expect(ids("1000061795")).toBe("1000061795");
    expect(columnFormatter("order_id", [], { type: "number", decimals: 0 })(1000061794)).toBe("1,000,061,794");
    expect(columnFormatter("revenue", [], "currency")("2500")).toBe("$2,500.00");
    const units = columnFormatter("units", [3, 12000.5], undefined);
    expect([units(3), units(12000.5)]).toEqual(["3.0", "12,000.5"]);
    expect(units(null)).toBe("");
    expect(units("n/a")).toBe("n/a");
  });
});

describe("formatInstant and cronInWords", () => {
  it("print a moment in the zone given, and name the zone", () => {
    const at = new Date("2026-11-26T13:05:00Z");
    expect(formatInstant(at, "America/New_York")).toBe("Nov 26, 2026, 8:05 AM (America/New_York)");
    expect(formatInstant(at.toISOString(), "Europe/Berlin")).toBe("Nov 26, 2026, 2:05 PM (Europe/Berlin)");
    expect(formatInstant(null, "UTC")).toBe("—");
  });

  it("write a cron expression in words with the zone it runs in; one it cannot read as written", () => {
    expect(cronInWords("0 8 * * *", "America/New_York")).toBe("At 08:00 AM (America/New_York)");
    expect(cronInWords("0 8 * * 1-5", "Europe/Berlin")).toBe("At 08:00 AM, Monday through Friday (Europe/Berlin)");
    expect(cronInWords("*/15 * * * *", "UTC")).toBe("Every 15 minutes (UTC)");
    expect(cronInWords("not a cron", "UTC")).toBe("not a cron (UTC)");
  });
});
