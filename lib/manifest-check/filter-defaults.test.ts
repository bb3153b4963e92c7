import { describe, expect, it } from "vitest";
import { formatManifestError } from "@/lib/manifest/errors";
import { parseDashboardYaml } from "./parse";

/** A dashboard with one date filter (its display line given) driving a KPI, and a select filter. */
const manifest = (filterDisplay: string, selectDisplay = "filter: { control: select, options: [store, online] }", kpiFilters = "") => `version: "1.0"
kind: dashboard
metadata: { id: sales, name: Sales }
spec:
  datasets:
    - id: sales
      from: orders
      dimensions:
        - { id: order_date, column: orders.order_date }
        - { id: channel, column: orders.channel }
      metrics:
        - { id: revenue, type: sql, expression: sum(orders.amount) }
---
version: "1.0"
kind: widget
metadata: { id: period, name: Period }
spec:
  component: filter
  layout: { x: 0, y: 0, w: 3, h: 1 }
  display:
    ${filterDisplay}
  bindings: [{ target: "*", field: order_date, operator: date }]
---
version: "1.0"
kind: widget
metadata: { id: channel, name: Channel }
spec:
  component: filter
  layout: { x: 3, y: 0, w: 3, h: 1 }
  display:
    ${selectDisplay}
---
version: "1.0"
kind: widget
metadata: { id: revenue, name: Revenue }
spec:
  component: kpi
  layout: { x: 0, y: 1, w: 3, h: 2 }
  data: { kind: dataset, dataset: sales, columns: [revenue], mappings: { value: revenue } }
${kpiFilters}`;

function errorsOf(yaml: string) {
  const result = parseDashboardYaml(yaml);
  return result.ok ? [] : result.errors.map((e) => formatManifestError(e));
}

describe("filter defaults are validated like filter values", () => {
  it("refuses a date default the query could not read, at its line and column", () => {
    expect(errorsOf(manifest("filter: { control: date, default: next fortnight }"))).toEqual([
      expect.stringMatching(/^manifest:21:39 spec\.display\.filter\.default: this default cannot be applied: cannot read "next fortnight" as a date; use YYYY-MM-DD/),
    ]);
    // Block style: the column of the value.
    expect(errorsOf(manifest("filter:\n      control: date_range\n      default: 2026-02-30 to 2026-03-31"))).toEqual([
      expect.stringMatching(/^manifest:23:16 spec\.display\.filter\.default: this default cannot be applied: "2026-02-30" is not a calendar date/),
    ]);
    expect(errorsOf(manifest("filter: { control: date, default: 2026-03-31 to 2026-03-01 }"))).toEqual([expect.stringMatching(/:21:39 .*ends before it starts/)]);
    expect(errorsOf(manifest("filter: { control: calendar, default: 12 }"))).toEqual([expect.stringMatching(/:21:43 .*a date filter value is a date expression/)]);
  });

  it("accepts every form the query reads, and no default at all", () => {
    for (const value of ["last month", "next month", "this week", "last 30 days", "2026-03-01", "2026-03-01 to 2026-03-31", "since 2026-01-01", "yesterday", "3 days ago", '"2026-01-01"', "null"]) {
      expect(errorsOf(manifest(`filter: { control: date, default: ${value} }`)), value).toEqual([]);
    }
    expect(errorsOf(manifest("filter: { control: date }"))).toEqual([]);
  });

  it("checks a default against each operator that reads it: bindings and other widgets' filters entries", () => {
    // A select default read by an `in` entry of the KPI is fine; one read as a date is not.
    expect(errorsOf(manifest("filter: { control: date }", "filter: { control: select, options: [store, online], default: store }", "  filters: [{ filter_id: channel, field: channel, operator: in }]"))).toEqual([]);
    expect(errorsOf(manifest("filter: { control: date }", "filter: { control: select, options: [store, online], default: store }", "  filters: [{ filter_id: channel, field: order_date, operator: date }]"))).toEqual([
      expect.stringMatching(/^manifest:31:67 spec\.display\.filter\.default: this default cannot be applied: cannot read "store" as a date/),
    ]);
    // A date control's text default read by `eq` is a value like any other; a list read by `eq` on a date control is not a date expression.
    expect(errorsOf(manifest("filter: { control: date, default: [a, b, c] }"))).toEqual([expect.stringMatching(/:21:39 .*a date filter value is a date expression/)]);
  });
});
