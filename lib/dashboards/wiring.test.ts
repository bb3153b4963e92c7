import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import { widgetConditions } from "@/lib/query/filters";
import {
  activeBreakpoints,
  decodeFilterValue,
  dependencyKey,
  encodeFilterValue,
  filtersAffecting,
  filtersFromParams,
  gridAreas,
  pageRegions,
  responsiveLayouts,
  visibleWidgetIds,
  widgetsAffectedBy,
  withFilterParam,
  type ViewManifest,
} from "./wiring";

const sample = (() => {
  const parsed = parseDashboardYaml(fs.readFileSync(path.join(import.meta.dirname, "../../docs/manifests/sample-dashboard.yaml"), "utf8"));
  if (!parsed.ok) throw new Error("the sample manifest does not validate");
  return { manifest: parsed.dashboard.manifest, widgets: parsed.dashboard.widgets } satisfies ViewManifest;
})();

describe("filter wiring on the sample dashboard", () => {
  it("a * binding drives every data widget; a widget's own filters entry drives it too", () => {
    expect(filtersAffecting(sample.widgets, "revenue_kpi")).toEqual(["date", "location_filter"]);
    expect(filtersAffecting(sample.widgets, "location_table")).toEqual(["date", "location_filter"]);
    // A filter is not driven by itself, only by the other filter's * binding.
    expect(filtersAffecting(sample.widgets, "location_filter")).toEqual(["date"]);
  });

  it("the location filter re-queries data widgets only, never text, markdown or images, nor itself", () => {
    const affected = widgetsAffectedBy(sample.widgets, "location_filter");
    expect(affected).toContain("revenue_kpi");
    expect(affected).toContain("order_grid");
    expect(affected).not.toContain("location_filter");
    expect(affected).not.toContain("notes");
    expect(affected).not.toContain("title");
    expect(widgetsAffectedBy(sample.widgets, "date")).toContain("location_filter");
  });

  it("a widget's dependency key changes only when a filter affecting it changes, and default differs from cleared", () => {
    const before = dependencyKey(sample.widgets, "revenue_kpi", {});
    expect(dependencyKey(sample.widgets, "revenue_kpi", { unrelated: 1 })).toBe(before);
    expect(dependencyKey(sample.widgets, "revenue_kpi", { date: "last month" })).not.toBe(before);
    expect(dependencyKey(sample.widgets, "revenue_kpi", { date: null })).not.toBe(before);
    expect(dependencyKey(sample.widgets, "location_filter", { location_filter: ["x"] })).toBe(dependencyKey(sample.widgets, "location_filter", {}));
  });
});

describe("filter values in the URL", () => {
  it.each<[unknown, string]>([
    ["last month", "last month"],
    ["2026-01-01 to 2026-01-31", "2026-01-01 to 2026-01-31"],
    [["loc_acme_nyc", "loc_acme_bos"], '["loc_acme_nyc","loc_acme_bos"]'],
    [null, "null"],
    [5, "5"],
    ["5", '"5"'],
    ["null", '"null"'],
    [{ from: "2026-01-01", to: "2026-01-31" }, '{"from":"2026-01-01","to":"2026-01-31"}'],
  ])("%j is written as %s and reads back the same", (value, text) => {
    expect(encodeFilterValue(value)).toBe(text);
    expect(decodeFilterValue(text)).toEqual(value);
  });

  it("reads only the dashboard's filter widgets from the search params", () => {
    const params = new URLSearchParams(withFilterParam("?tab=analysis&f.unknown=1", "location_filter", ["loc_acme_nyc"]));
    expect(filtersFromParams(sample, params)).toEqual({ location_filter: ["loc_acme_nyc"] });
    expect(filtersFromParams(sample, { "f.date": "yesterday", tab: "overview" })).toEqual({ date: "yesterday" });
    expect(withFilterParam("?f.date=today&tab=analysis", "date", undefined)).toBe("?tab=analysis");
  });
});

describe("page regions", () => {
  it("puts bands, filters and grid widgets of the chosen tab in their places", () => {
    const overview = pageRegions(sample, null);
    expect(overview.tab).toBe("overview");
    expect(overview.header).toEqual(["title"]);
    expect(overview.footer).toEqual(["footnote"]);
    expect(overview.filters).toEqual(["date", "location_filter"]);
    expect(overview.grid).toContain("revenue_kpi");
    expect(overview.grid).not.toContain("order_grid");
    const analysis = pageRegions(sample, "analysis");
    expect(analysis.grid).toContain("order_grid");
    expect(analysis.grid).not.toContain("revenue_kpi");
    expect(pageRegions(sample, "no-such-tab").tab).toBe("overview");
    expect(visibleWidgetIds(overview)).toEqual(expect.arrayContaining(["title", "footnote", "date", "revenue_trend"]));
  });
});

describe("responsive layouts", () => {
  it("uses layout.responsive per breakpoint, falls back to the base layout, and stacks mobile full width in reading order", () => {
    const overview = pageRegions(sample, "overview").grid.map((id) => sample.widgets.find((w) => w.metadata.id === id)!);
    const layouts = responsiveLayouts(overview);
    const trend = layouts.desktop.find((b) => b.i === "revenue_trend");
    expect(trend).toEqual({ i: "revenue_trend", x: 0, y: 3, w: 8, h: 4 });
    expect(layouts.tablet).toEqual(layouts.desktop);
    expect(layouts.mobile.every((b) => b.x === 0 && b.w === 12)).toBe(true);
    expect(layouts.mobile.map((b) => b.i).slice(0, 5)).toEqual(["revenue_kpi", "orders_kpi", "margin_kpi", "target_kpi", "revenue_trend"]);
    for (let i = 1; i < layouts.mobile.length; i += 1) expect(layouts.mobile[i].y).toBe(layouts.mobile[i - 1].y + layouts.mobile[i - 1].h);
  });
});

describe("grid areas laid out on the server", () => {
  const box = (id: string, x: number, y: number, w: number, h: number, responsive?: Record<string, { x: number; y: number; w: number; h: number }>) =>
    ({ ...sample.widgets[0], metadata: { ...sample.widgets[0].metadata, id }, spec: { ...sample.widgets[0].spec, layout: { x, y, w, h, responsive } } }) as (typeof sample.widgets)[number];

  it("places the sample's overview where react-grid-layout put it, and stacks it on a phone", () => {
    const overview = pageRegions(sample, "overview").grid.map((id) => sample.widgets.find((w) => w.metadata.id === id)!);
    const areas = gridAreas(overview, sample.manifest.spec.responsive?.breakpoints);
    // Manifest y 3 under KPIs 2 rows high: the empty row closes, as it did under react-grid-layout.
    expect(areas.get("revenue_trend")!.desktop).toBe("3 / 1 / span 4 / span 8");
    expect(areas.get("revenue_kpi")!.mobile).toBe("1 / 1 / span 2 / span 12");
    expect(areas.get("orders_kpi")!.mobile).toMatch(/^3 \/ 1 \//);
  });

  it("moves boxes up into empty rows and clamps them to 12 columns, as react-grid-layout's compactor does", () => {
    const areas = gridAreas([box("a", 0, 0, 6, 2), box("b", 0, 9, 6, 3), box("c", 10, 0, 5, 2)], ["desktop"]);
    expect(areas.get("a")!.desktop).toBe("1 / 1 / span 2 / span 6");
    expect(areas.get("b")!.desktop).toBe("3 / 1 / span 3 / span 6");
    // 10 + 5 is past the 12th column: moved left to fit.
    expect(areas.get("c")!.desktop).toBe("1 / 8 / span 2 / span 5");
  });

  it("each width range uses the manifest breakpoint in force at its start, the narrowest listed from 0 px", () => {
    const areas = gridAreas([box("a", 0, 0, 4, 2, { wide: { x: 8, y: 0, w: 4, h: 2 } }), box("b", 4, 0, 4, 2)], ["tablet", "wide"]);
    // No mobile listed: a phone gets the tablet layout, not the stack; desktop widths too.
    expect(areas.get("a")).toEqual({ mobile: "1 / 1 / span 2 / span 4", tablet: "1 / 1 / span 2 / span 4", desktop: "1 / 1 / span 2 / span 4", wide: "1 / 9 / span 2 / span 4" });
    expect(areas.get("b")!.wide).toBe("1 / 5 / span 2 / span 4");
  });
});

describe("breakpoints", () => {
  it("uses the manifest's breakpoints, the narrowest listed starting at 0", () => {
    expect(activeBreakpoints(undefined)).toEqual({ mobile: 0, tablet: 640, desktop: 1000, wide: 1500 });
    expect(activeBreakpoints(["wide", "tablet"])).toEqual({ tablet: 0, wide: 1500 });
    expect(activeBreakpoints([])).toEqual({ mobile: 0, tablet: 640, desktop: 1000, wide: 1500 });
  });
});

describe("the viewer and the engine agree on which filters drive a widget", () => {
  it("re-queries a widget for exactly the filters whose values become its conditions (sample dashboard)", () => {
    // A value for every filter, so each use becomes a condition; the viewer's rule must name the same filters.
    const everyFilter = Object.fromEntries(sample.widgets.filter((w) => w.spec.component === "filter").map((w) => [w.metadata.id, "2026-01-01"]));
    for (const widget of sample.widgets) {
      const engine = [...new Set(widgetConditions(sample.widgets, widget, everyFilter).map((c) => c.source))].sort();
      expect(filtersAffecting(sample.widgets, widget.metadata.id), widget.metadata.id).toEqual(engine);
    }
  });
});
