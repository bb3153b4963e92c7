import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import type { WidgetManifest } from "@/lib/manifest/schema";
import { alertColumns } from "./alert-columns";

const parsed = parseDashboardYaml(fs.readFileSync(path.join(process.cwd(), "lib/dashboards/fixtures/small-dashboard.yaml"), "utf8"));
if (!parsed.ok) throw new Error("the small dashboard does not parse");
const dataWidget = parsed.dashboard.widgets.find((w) => w.spec.component !== "filter" && w.spec.data !== undefined)!;
const withMappings = (mappings: Record<string, string | string[]>): WidgetManifest => ({ ...dataWidget, spec: { ...dataWidget.spec, data: { ...dataWidget.spec.data!, mappings } } });

describe("what an alert on a widget may watch", () => {
  it("numeric columns are metrics (the chart's mapped series first), identifiers and text are dimensions", () => {
    const result = {
      error: null,
      cached: false,
      columns: ["location", "location_id", "orders", "revenue"],
      rows: [
        { location: "Boston", location_id: 7, orders: 3, revenue: "120.50" },
        { location: "Austin", location_id: 8, orders: null, revenue: "80" },
      ],
    };
    expect(alertColumns(withMappings({ x: "location", y: "revenue" }), result)).toEqual({ metrics: ["revenue", "orders"], dimensions: ["location", "location_id"] });
  });

  it("a column with any value that is no number is not a metric; no result yet offers nothing", () => {
    const result = { error: null, cached: false, columns: ["code", "amount"], rows: [{ code: "12", amount: 1 }, { code: "A7", amount: 2 }] };
    expect(alertColumns(withMappings({}), result)).toEqual({ metrics: ["amount"], dimensions: ["code"] });
    expect(alertColumns(withMappings({}), undefined)).toEqual({ metrics: [], dimensions: [] });
  });
});
