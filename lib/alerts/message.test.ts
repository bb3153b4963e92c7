import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { widgetColumnFormats } from "@/lib/dashboards/column-formats";
import { filtersFromParams } from "@/lib/dashboards/wiring";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import { config } from "@/lib/config";
import { alertText, dashboardLink, type AlertFinding } from "./message";

/* The message of issue 45 §4 against hand-written text: figures in the dashboard's declared formats. */

const parsed = parseDashboardYaml(fs.readFileSync(path.join(process.cwd(), "docs/manifests/sample-dashboard.yaml"), "utf8"));
if (!parsed.ok) throw new Error("the sample dashboard does not parse");
const { manifest, widgets } = parsed.dashboard;
const widget = (id: string) => widgets.find((w) => w.metadata.id === id)!;

function finding(over: Partial<AlertFinding> & Pick<AlertFinding, "widget" | "column" | "condition">): AlertFinding {
  return {
    alertId: "wal_1",
    alertName: "Revenue watch",
    kind: "firing",
    dashboard: { name: "Sales overview", slug: "sales-overview" },
    formats: widgetColumnFormats(manifest.spec.datasets, over.widget),
    filters: { date: "last month" },
    dimension: null,
    value: null,
    previousValue: null,
    change: null,
    scope: "general manager, locations loc_acme_bos",
    ...over,
  };
}

describe("alert message", () => {
  it("a KPI tile's figure with its currency and prefix, against the threshold", () => {
    const text = alertText(finding({ widget: widget("revenue_kpi"), column: "value", condition: { kind: "below", threshold: 10000 }, value: 8123.4 }));
    expect(text.subject).toBe("Alert: Revenue $8,123.40, below $10,000.00");
    expect(text.body.split("\n")[0]).toBe("Revenue is $8,123.40: below $10,000.00.");
    expect(text.body).toContain('Alert "Revenue watch" on Sales overview, in the scope of general manager, locations loc_acme_bos.');
  });

  it("a percent KPI reads as its tile does (the declared format: up to one decimal); a percent change names the previous period and the amount", () => {
    const text = alertText(
      finding({
        widget: widget("margin_kpi"),
        column: "value",
        condition: { kind: "change", against: "week", measure: "percent", direction: "decrease", amount: 10 },
        value: 31.5,
        previousValue: 36,
        change: -12.5,
      }),
    );
    expect(text.body.split("\n")[0]).toBe("Gross margin is 31.5%, down 12.5% from 36% the previous week: a decrease of at least 10% against the previous week.");
  });

  it("an absolute change on a chart's money column reads in the column's currency; a dimension value is named", () => {
    const text = alertText(
      finding({
        widget: widget("revenue_by_location"),
        column: "revenue",
        condition: { kind: "change", against: "month", measure: "absolute", direction: "either", amount: 500 },
        dimension: { column: "location", value: "Boston Back Bay" },
        value: 1200,
        previousValue: 2000.5,
        change: -800.5,
      }),
    );
    expect(text.body.split("\n")[0]).toBe("Revenue by location · Revenue for Location Boston Back Bay is $1,200.00, down $800.50 from $2,000.50 the previous month: a change of at least $500.00 against the previous month.");
  });

  it("outside a range, resolved, and no data", () => {
    const outside = { kind: "outside", low: 100, high: 250 } as const;
    expect(alertText(finding({ widget: widget("orders_kpi"), column: "value", condition: outside, value: 1234 })).body.split("\n")[0]).toBe("Orders is 1,234: outside 100 – 250.");
    const resolved = alertText(finding({ widget: widget("orders_kpi"), column: "value", condition: outside, kind: "resolved", value: 200 }));
    expect(resolved.subject).toBe("Resolved: Orders 200, no longer outside 100 – 250");
    expect(alertText(finding({ widget: widget("orders_kpi"), column: "value", condition: { kind: "no_data" } })).subject).toBe("Alert: Orders no data");
  });

  it("links to the dashboard under the alert's filters, as the viewer reads them back", () => {
    const filters = { date: "2026-10-01..2026-10-31", location_filter: ["loc_acme_bos", "loc_acme_nyc"] };
    const link = dashboardLink("sales-overview", filters);
    expect(link.startsWith(`${config().publicUrl}/dashboards/custom/sales-overview?`)).toBe(true);
    const read = filtersFromParams({ manifest, widgets }, new URL(link).searchParams);
    expect(read).toEqual(filters);
    const text = alertText(finding({ widget: widget("revenue_kpi"), column: "value", condition: { kind: "above", threshold: 1 }, value: 2, filters }));
    expect(text.body).toContain(`Open the dashboard with the alert's filters: ${link}`);
    expect(text.alertLink).toBe(`${config().publicUrl}/alerts/wal_1`);
  });
});
