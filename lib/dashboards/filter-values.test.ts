import { describe, expect, it } from "vitest";
import { resolveDateExpression } from "@/lib/query/dates";
import { DATE_PRESETS, datePresetOf, describeAppliedDate, describeDateExpression, effectiveValue, filterOptions, joinDateRange, selectedValues, splitDateRange, typedDateState } from "./filter-values";
import { sampleWidget } from "@/components/dashboards/widgets/sample-widgets";

describe("filterOptions", () => {
  it("takes static options, scalars and {label, value}, without duplicates", () => {
    const options = filterOptions({ control: "select", multiple: false, options: ["online", { label: "In store", value: "store" }, 3, null, "online"] }, undefined, [], []);
    expect(options.map((o) => [o.label, o.value])).toEqual([
      ["online", "online"],
      ["In store", "store"],
      ["3", 3],
      ["(none)", null],
    ]);
  });

  it("reads the sample location filter's rows through its value and label mappings", () => {
    const widget = sampleWidget("location_filter");
    const rows = [
      { location_id: "loc_acme_ber", location: "Berlin" },
      { location_id: "loc_acme_ham", location: "Hamburg" },
    ];
    const options = filterOptions(widget.spec.display.filter, widget.spec.data?.mappings, ["location_id", "location"], rows);
    expect(options.map((o) => [o.label, o.value])).toEqual([
      ["Berlin", "loc_acme_ber"],
      ["Hamburg", "loc_acme_ham"],
    ]);
  });

  it("falls back to the first column as value and the second as label", () => {
    const options = filterOptions(undefined, undefined, ["code", "name"], [{ code: 1, name: "One" }, { code: 2, name: null }]);
    expect(options.map((o) => [o.label, o.value])).toEqual([
      ["One", 1],
      ["2", 2],
    ]);
  });

  it("keeps 1 and '1' apart", () => {
    const options = filterOptions({ control: "select", multiple: false, options: [1, "1"] }, undefined, [], []);
    expect(options).toHaveLength(2);
  });
});

describe("selectedValues and effectiveValue", () => {
  it("normalizes single and multiple values", () => {
    expect(selectedValues(undefined)).toEqual([]);
    expect(selectedValues("")).toEqual([]);
    expect(selectedValues("a")).toEqual(["a"]);
    expect(selectedValues(["a", 2, { x: 1 }])).toEqual(["a", 2]);
  });

  it("shows the manifest default until the URL has a value; null stays cleared", () => {
    const display = sampleWidget("date").spec.display.filter;
    expect(effectiveValue(undefined, display)).toBe("last month");
    expect(effectiveValue(null, display)).toBeNull();
    expect(effectiveValue("today", display)).toBe("today");
  });
});

describe("describeDateExpression", () => {
  const now = new Date("2026-11-23T00:30:00Z");

  it("spells out the days a range covers, last day included", () => {
    expect(describeDateExpression("last month", "Europe/Berlin", now)).toEqual({ ok: true, text: "Thu, Oct 1, 2026 – Sat, Oct 31, 2026" });
    expect(describeDateExpression("2025-01-01 to 2025-03-31", "UTC", now)).toEqual({ ok: true, text: "Wed, Jan 1, 2025 – Mon, Mar 31, 2025" });
    expect(describeDateExpression("2025-03-01", "UTC", now)).toEqual({ ok: true, text: "Sat, Mar 1, 2025" });
  });

  it("uses the organization's zone for relative days", () => {
    // 00:30 UTC is still the 22nd in New York.
    expect(describeDateExpression("today", "America/New_York", now)).toEqual({ ok: true, text: "Sun, Nov 22, 2026" });
    expect(describeDateExpression("today", "Asia/Tokyo", now)).toEqual({ ok: true, text: "Mon, Nov 23, 2026" });
  });

  it("names open bounds", () => {
    expect(describeDateExpression("before 2025-03-01", "UTC", now)).toEqual({ ok: true, text: "until Fri, Feb 28, 2025" });
    expect(describeDateExpression("after 2025-03-01", "UTC", now)).toEqual({ ok: true, text: "from Sun, Mar 2, 2025" });
  });

  it("reports unreadable input with the parser's message", () => {
    const result = describeDateExpression("the day after the party", "UTC", now);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toMatch(/cannot read "the day after the party" as a date/);
    expect(describeDateExpression("2025-03-31 to 2025-01-01", "UTC", now)).toMatchObject({ ok: false, error: expect.stringMatching(/ends before it starts/) });
  });
});

describe("typed date text against the applied value", () => {
  const now = new Date("2026-11-23T00:30:00Z");

  it("is not applied once the box is left holding text that cannot be read, and never silently becomes the applied value", () => {
    expect(typedDateState("next fortnight", "last month", false, "UTC", now)).toBe("unapplied");
    expect(typedDateState("next fortnight", "", false, "UTC", now)).toBe("unapplied");
    // While the box has focus it is an edit in progress; the range or the error shows beside the label.
    expect(typedDateState("next fortn", "last month", true, "UTC", now)).toBe("editing");
    expect(typedDateState("last month", "last month", false, "UTC", now)).toBe("applied");
    expect(typedDateState(" last month ", "last month", false, "UTC", now)).toBe("applied");
    // Readable text is applied when the box is left; empty text clears the filter.
    expect(typedDateState("this year", "last month", false, "UTC", now)).toBe("applied");
    expect(typedDateState("", "last month", false, "UTC", now)).toBe("applied");
  });

  it("says which value the figures use", () => {
    expect(describeAppliedDate("last month", "Europe/Berlin", now)).toBe("last month (Thu, Oct 1, 2026 – Sat, Oct 31, 2026)");
    expect(describeAppliedDate(null, "UTC", now)).toBe("all dates");
    expect(describeAppliedDate(undefined, "UTC", now)).toBe("all dates");
    expect(describeAppliedDate("", "UTC", now)).toBe("all dates");
    expect(describeAppliedDate(["2025-01-01", "2025-01-31"], "UTC", now)).toBe("2025-01-01 to 2025-01-31 (Wed, Jan 1, 2025 – Fri, Jan 31, 2025)");
  });
});

describe("date range pickers", () => {
  it("write expressions that cover exactly the picked days", () => {
    const context = { now: new Date("2026-11-23T12:00:00Z"), timeZone: "Europe/Berlin" };
    const both = resolveDateExpression(joinDateRange("2025-01-01", "2025-03-31"), context);
    const toOnly = resolveDateExpression(joinDateRange("", "2025-03-31"), context);
    expect(toOnly.to).toEqual(both.to);
    expect(toOnly.from).toBeUndefined();
    expect(resolveDateExpression(joinDateRange("2025-01-01", ""), context)).toEqual({ from: both.from });
    expect(joinDateRange("", "")).toBe("");
    expect(joinDateRange("", "2024-12-31")).toBe("before 2025-01-01");
  });

  it("read back what they wrote, and nothing from other expressions", () => {
    for (const [from, to] of [
      ["2025-01-01", "2025-03-31"],
      ["2025-01-01", ""],
      ["", "2024-02-29"],
    ]) {
      expect(splitDateRange(joinDateRange(from, to))).toEqual({ from, to });
    }
    expect(splitDateRange("2025-05-05")).toEqual({ from: "2025-05-05", to: "2025-05-05" });
    expect(splitDateRange("last month")).toEqual({ from: "", to: "" });
  });
});

describe("date presets", () => {
  // Wednesday 2026-11-18, 23:30 in New York (already the 19th in UTC).
  const now = new Date("2026-11-19T04:30:00Z");
  const zone = "America/New_York";

  it("write expressions the date box reads, covering the days their labels name", () => {
    const days = Object.fromEntries(DATE_PRESETS.map((preset) => [preset.label, describeDateExpression(preset.expression, zone, now)]));
    expect(days).toEqual({
      Today: { ok: true, text: "Wed, Nov 18, 2026" },
      Yesterday: { ok: true, text: "Tue, Nov 17, 2026" },
      "Last 7 days": { ok: true, text: "Thu, Nov 12, 2026 – Wed, Nov 18, 2026" },
      "Last 30 days": { ok: true, text: "Tue, Oct 20, 2026 – Wed, Nov 18, 2026" },
      "This month": { ok: true, text: "Sun, Nov 1, 2026 – Mon, Nov 30, 2026" },
      "Last month": { ok: true, text: "Thu, Oct 1, 2026 – Sat, Oct 31, 2026" },
      "This year": { ok: true, text: "Thu, Jan 1, 2026 – Thu, Dec 31, 2026" },
      "Last year": { ok: true, text: "Wed, Jan 1, 2025 – Wed, Dec 31, 2025" },
    });
  });

  it("are recognised in the value whatever its case and spacing, and only as whole expressions", () => {
    expect(datePresetOf("  Last   7 days ")?.label).toBe("Last 7 days");
    expect(datePresetOf("last 8 days")).toBeUndefined();
    expect(datePresetOf("2025-01-01 to 2025-03-31")).toBeUndefined();
    expect(datePresetOf("")).toBeUndefined();
  });
});
