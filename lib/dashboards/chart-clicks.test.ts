import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ownClickContext } from "@/lib/manifest-check/interactions";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import type { WidgetManifest } from "@/lib/manifest/schema";
import { buildEchartsOption } from "./chart-option";
import { chartPoints, chipsAfterClick, clickedRows, nearestPoint, planClick, pointFields, restoredChips, searchAfter, searchUndoing, stillApplied, type ClickChip, type ClickSituation } from "./chart-clicks";

const parsed = parseDashboardYaml(fs.readFileSync(path.join(import.meta.dirname, "..", "..", "docs", "manifests", "sample-dashboard.yaml"), "utf8"));
if (!parsed.ok) throw new Error("the sample must parse");
const sample = parsed.dashboard;
const widget = (id: string): WidgetManifest => sample.widgetsById.get(id)!;
const context = ownClickContext(sample.widgets, sample.datasets, sample.manifest.spec.tabs.map((t) => t.id), "sample-sales");
const situation = (extra: Partial<ClickSituation> = {}): ClickSituation => ({ context, urlFilters: {}, locked: new Set(), anonymous: false, ...extra });

const byLocation = {
  columns: ["location", "location_id", "revenue"],
  rows: [
    { location: "Manhattan", location_id: "loc_acme_man", revenue: 10 },
    { location: "Brooklyn", location_id: "loc_acme_bkn", revenue: 7 },
  ],
};

describe("a click on a chart", () => {
  it("finds the rows of the clicked bar, slice, cell and point", () => {
    expect(clickedRows(widget("revenue_by_location"), byLocation, { name: "Brooklyn", seriesName: "Revenue" })).toEqual([byLocation.rows[1]]);
    const pie = { columns: ["channel", "revenue"], rows: [{ channel: "store", revenue: 1 }, { channel: "online", revenue: 2 }] };
    expect(clickedRows(widget("channel_mix"), pie, { name: "online" })).toEqual([pie.rows[1]]);
    const heat = { columns: ["weekday", "channel", "orders"], rows: [{ weekday: "Tue", channel: "store", orders: 3 }, { weekday: "Mon", channel: "online", orders: 4 }] };
    // Weekdays are drawn in weekday order (Mon is column 0), channels in row order (online is row 1).
    expect(clickedRows(widget("weekday_heatmap"), heat, { value: [0, 1, 4] })).toEqual([heat.rows[1]]);
    const scatter = { columns: ["location", "orders", "avg_order"], rows: [{ location: "A", orders: 1, avg_order: 2 }, { location: "B", orders: 3, avg_order: 4 }] };
    expect(clickedRows(widget("order_scatter"), scatter, { dataIndex: 1, seriesName: "Avg order" })).toEqual([scatter.rows[1]]);
    expect(clickedRows(widget("category_radar"), { columns: [], rows: [] }, { seriesIndex: 0 })).toEqual([]);
  });

  it("reads a field only where every row of the point agrees", () => {
    expect(pointFields([{ a: 1, b: "x" }, { a: 1, b: "y" }], ["a", "b", "c"])).toEqual({ a: 1 });
  });

  it("cross-filters: the bar's location id into the Locations filter (a list), named by the bar", () => {
    const plan = planClick(widget("revenue_by_location"), [byLocation.rows[0]], "Manhattan", situation({ urlFilters: { location_filter: ["loc_acme_bkn"] } }));
    expect(plan).toEqual({ kind: "filters", skipped: [], changes: [{ filterId: "location_filter", label: "Locations", value: ["loc_acme_man"], previous: ["loc_acme_bkn"], text: "Manhattan" }] });
    if (plan.kind !== "filters") throw new Error("plan");
    const after = searchAfter("?tab=overview", plan.changes);
    expect(new URLSearchParams(after).get("f.location_filter")).toBe('["loc_acme_man"]');
    expect(stillApplied(after.slice(1), plan.changes)).toBe(true);
    const undone = searchUndoing(after, plan.changes);
    expect(new URLSearchParams(undone).get("f.location_filter")).toBe('["loc_acme_bkn"]');
    expect(stillApplied(undone.slice(1), plan.changes)).toBe(false);
    // Back to the default when the filter was left out before the click.
    expect(new URLSearchParams(searchUndoing(after, [{ ...plan.changes[0], previous: undefined }])).has("f.location_filter")).toBe(false);
  });

  it("chips survive a reload through sessionStorage's JSON, and anything else stored there restores none", () => {
    const chips: ClickChip[] = [
      { id: 1, source: "Trend", changes: [{ filterId: "date", label: "Order date", value: "2026-10-03", previous: undefined, text: "2026-10-03" }] },
      { id: 2, source: "Revenue by location", changes: [{ filterId: "location_filter", label: "Locations", value: ["loc_b"], previous: ["loc_a"], text: "loc_b" }] },
    ];
    const restored = restoredChips(JSON.stringify(chips));
    expect(restored).toEqual(chips);
    // The undo of a restored chip puts the URL back exactly as the original would.
    const after = searchAfter("", chips[1].changes);
    expect(searchUndoing(after, restored[1].changes)).toBe(searchUndoing(after, chips[1].changes));
    for (const stored of [null, "", "not json", "{}", '[{"id":"1"}]', JSON.stringify([{ ...chips[0], changes: "x" }]), JSON.stringify(Array(101).fill(chips[0]))]) {
      expect(restoredChips(stored)).toEqual([]);
    }
  });

  it("a second click on the same filter takes its chip over, and undoing goes back to before the first", () => {
    const change = (value: string, previous: unknown) => ({ filterId: "location_filter", label: "Locations", value: [value], previous, text: value });
    const date: ClickChip = { id: 1, source: "Trend", changes: [{ filterId: "date", label: "Order date", value: "2026-10-03", previous: undefined, text: "2026-10-03" }] };
    const first: ClickChip = { id: 2, source: "Revenue by location", changes: [change("loc_a", undefined)] };
    const second: ClickChip = { id: 3, source: "Revenue by location", changes: [change("loc_b", ["loc_a"])] };
    expect(chipsAfterClick([date, first], [date, first], second)).toEqual([date, { ...second, changes: [change("loc_b", undefined)] }]);
    // The first chip no longer shown (its filter was changed by hand since): the new chip undoes to what the filter held.
    expect(chipsAfterClick([date, first], [date], second)).toEqual([date, second]);
  });

  it("never changes a filter an embed locks", () => {
    const plan = planClick(widget("revenue_by_location"), [byLocation.rows[0]], "Manhattan", situation({ locked: new Set(["location_filter"]), anonymous: true }));
    expect(plan).toEqual({ kind: "none", reason: "Locations is fixed by the page that embeds this dashboard" });
  });

  it("drills through to its own Analysis tab with the clicked day, in place", () => {
    const plan = planClick(widget("revenue_trend"), [{ order_date: "2026-10-03", revenue: 5 }], "2026-10-03", situation());
    expect(plan).toMatchObject({ kind: "filters", tab: "analysis", changes: [{ filterId: "date", value: "2026-10-03", text: "2026-10-03" }] });
    if (plan.kind !== "filters") throw new Error("plan");
    expect(new URLSearchParams(searchAfter("", plan.changes, plan.tab)).get("tab")).toBe("analysis");
  });

  it("opens another dashboard only when the viewer may, and no URL from an embed", () => {
    const other = { ...widget("revenue_trend"), spec: { ...widget("revenue_trend").spec, on_click: { drill_through: { dashboard: "daily", tab: "main", filters: [{ filter: "day", field: "order_date" }] } } } };
    const row = [{ order_date: "2026-10-03", revenue: 5 }];
    expect(planClick(other, row, "2026-10-03", situation())).toEqual({ kind: "none", reason: "You cannot open the dashboard 'daily'" });
    const open = { ...context, drills: { daily: { tabs: ["main"], filters: { day: { kinds: ["date" as const], date: true, multiple: false, between: false, label: "Day" } } } } };
    expect(planClick(other, row, "2026-10-03", situation({ context: open }))).toEqual({ kind: "open", href: "/dashboards/custom/daily?tab=main&f.day=2026-10-03", skipped: [] });
    const url = { ...other, spec: { ...other.spec, on_click: { drill_through: { url: "/documents?q={order_date}", filters: [] } } } };
    expect(planClick(url, row, undefined, situation())).toEqual({ kind: "open", href: "/documents?q=2026-10-03", skipped: [] });
    expect(planClick(url, row, undefined, situation({ anonymous: true }))).toMatchObject({ kind: "none" });
    // A clicked value at the start of the path cannot make it lead to another host.
    const offSite = { ...other, spec: { ...other.spec, on_click: { drill_through: { url: "/{order_date}", filters: [] } } } };
    expect(planClick(offSite, [{ ...row[0], order_date: "/evil.example" }], undefined, situation())).toEqual({ kind: "none", reason: "This link would lead off this site" });
  });
});

describe("points a keyboard walks and a click on a line picks (issue 44 §4)", () => {
  const trend = widget("revenue_trend");
  const days = { columns: ["order_date", "revenue"], rows: [{ order_date: "2026-10-02", revenue: 20 }, { order_date: "2026-10-01", revenue: 10 }, { order_date: "2026-10-03", revenue: null }] };
  const option = buildEchartsOption(trend.spec.display.echarts?.option, trend.spec.data?.mappings, days);

  it("lists each series' points as ECharts reports a click on them, gaps left out", () => {
    expect(chartPoints(option)).toEqual([
      [
        { seriesIndex: 0, seriesName: "Revenue", dataIndex: 0, value: 10, name: "2026-10-01" },
        { seriesIndex: 0, seriesName: "Revenue", dataIndex: 1, value: 20, name: "2026-10-02" },
      ],
    ]);
    // A keyboard's Enter on a point selects the rows a mouse click on it would.
    expect(clickedRows(trend, days, chartPoints(option)[0][1])).toEqual([days.rows[0]]);
    const pie = widget("channel_mix");
    const mix = { columns: ["channel", "revenue"], rows: [{ channel: "store", revenue: 7 }, { channel: "online", revenue: 3 }] };
    const points = chartPoints(buildEchartsOption(pie.spec.display.echarts?.option, pie.spec.data?.mappings, mix));
    expect(points[0].map((p) => p.name)).toEqual(["store", "online"]);
    expect(clickedRows(pie, mix, points[0][1])).toEqual([mix.rows[1]]);
    expect(chartPoints({ series: [{ type: "radar", data: [{ value: [1, 2] }] }] })).toEqual([[]]);
  });

  it("picks the series whose value at the clicked category is nearest the click", () => {
    const two = buildEchartsOption({ xAxis: { type: "category" }, series: [{ type: "line" }] }, { x: "day", y: ["revenue", "cost"] }, { columns: ["day", "revenue", "cost"], rows: [{ day: "Mon", revenue: 100, cost: 40 }, { day: "Tue", revenue: 120, cost: 50 }] });
    expect(nearestPoint(two, 1, 110)).toMatchObject({ seriesName: "Revenue", name: "Tue", dataIndex: 1, value: 120 });
    expect(nearestPoint(two, 1, 60)).toMatchObject({ seriesName: "Cost", name: "Tue", value: 50 });
    // A click on the area below the line, far from its symbol, still finds the day.
    expect(nearestPoint(option, 0, 0)).toMatchObject({ name: "2026-10-01" });
    // A gap or a category past the end picks nothing.
    expect(nearestPoint(option, 2, 30)).toBeNull();
    expect(nearestPoint(option, 9, 30)).toBeNull();
  });
});
