import { describe, expect, it } from "vitest";
import { buildEchartsOption, chartType, niceMax, orderedCategories, type EchartsOption } from "./chart-option";
import { sampleWidget } from "@/components/dashboards/widgets/sample-widgets";

type Obj = Record<string, unknown>;
type Series = Obj & { data: unknown[] };

function build(widgetId: string, columns: string[], rows: Obj[]) {
  const widget = sampleWidget(widgetId);
  const base = widget.spec.display.echarts?.option;
  const option = buildEchartsOption(base, widget.spec.data?.mappings, { columns, rows });
  return { base, option, series: option.series as Series[] };
}

describe("line and bar", () => {
  it("puts the sample trend's days in date order with the base series' style", () => {
    const { base, option, series } = build("revenue_trend", ["order_date", "revenue"], [
      { order_date: "2026-10-03", revenue: 30 },
      { order_date: "2026-10-01", revenue: 10 },
      { order_date: "2026-10-02", revenue: "20.5" },
    ]);
    expect((option.xAxis as Obj).data).toEqual(["2026-10-01", "2026-10-02", "2026-10-03"]);
    expect(series).toHaveLength(1);
    expect(series[0]).toMatchObject({ type: "line", smooth: true, areaStyle: {}, name: "Revenue", data: [10, 20.5, 30] });
    expect(option.tooltip).toMatchObject({ trigger: "axis" });
    // The manifest's option is not modified.
    expect(base?.series).toEqual([{ type: "line", smooth: true, areaStyle: {} }]);
  });

  it("draws one series per value column, with a legend, missing cells as gaps", () => {
    const option = buildEchartsOption({ series: [{ type: "bar" }] }, { x: "location", y: ["revenue", "cost"] }, {
      columns: ["location", "revenue", "cost"],
      rows: [
        { location: "Berlin", revenue: 100, cost: 60 },
        { location: "Hamburg", revenue: 80, cost: null },
      ],
    });
    const series = option.series as Series[];
    expect(series.map((s) => [s.name, s.type, s.data])).toEqual([
      ["Revenue", "bar", [100, 80]],
      ["Cost", "bar", [60, null]],
    ]);
    expect(option.legend).toBeDefined();
  });

  it("splits rows into series by the series mapping, aligned on the categories", () => {
    const option = buildEchartsOption({ series: [{ type: "line" }] }, { x: "month", y: "revenue", series: "channel" }, {
      columns: ["month", "channel", "revenue"],
      rows: [
        { month: "2026-02", channel: "online", revenue: 5 },
        { month: "2026-01", channel: "online", revenue: 4 },
        { month: "2026-01", channel: "store", revenue: 7 },
      ],
    });
    expect((option.xAxis as Obj).data).toEqual(["2026-01", "2026-02"]);
    expect((option.series as Series[]).map((s) => [s.name, s.data])).toEqual([
      ["online", [4, 5]],
      ["store", [7, null]],
    ]);
  });

  it("lays categories on the y axis when the base makes the bars horizontal", () => {
    const option = buildEchartsOption({ xAxis: { type: "value" }, yAxis: { type: "category" }, series: [{ type: "bar" }] }, { x: "location", y: "revenue" }, {
      columns: ["location", "revenue"],
      rows: [{ location: "Berlin", revenue: 3 }],
    });
    expect((option.yAxis as Obj).data).toEqual(["Berlin"]);
    expect((option.xAxis as Obj).type).toBe("value");
  });

  it("plots pairs on a time axis", () => {
    const option = buildEchartsOption({ xAxis: { type: "time" }, series: [{ type: "line" }] }, { x: "day", y: "n" }, {
      columns: ["day", "n"],
      rows: [
        { day: "2026-01-02", n: 2 },
        { day: "2026-01-01", n: 1 },
      ],
    });
    expect((option.series as Series[])[0].data).toEqual([
      ["2026-01-01", 1],
      ["2026-01-02", 2],
    ]);
  });

  it("guesses the category and values without mappings", () => {
    const option = buildEchartsOption({}, undefined, { columns: ["region", "orders"], rows: [{ region: "North", orders: 4 }] });
    expect(chartType({}, undefined)).toBe("bar");
    expect((option.xAxis as Obj).data).toEqual(["North"]);
    expect((option.series as Series[])[0]).toMatchObject({ type: "bar", data: [4] });
  });
});

describe("pie", () => {
  it("makes slices of the sample channel mix and keeps the base radius", () => {
    const { option, series } = build("channel_mix", ["channel", "revenue"], [
      { channel: "online", revenue: 70 },
      { channel: "store", revenue: 30 },
    ]);
    expect(series[0]).toMatchObject({ type: "pie", radius: ["40%", "70%"], data: [{ name: "online", value: 70 }, { name: "store", value: 30 }] });
    expect(option.xAxis).toBeUndefined();
    expect(option.tooltip).toMatchObject({ trigger: "item" });
    const formatter = (option.tooltip as { formatter: (p: Obj) => string }).formatter;
    expect(formatter({ name: "<b>x</b>", value: 1234.5, percent: 12.34 })).toBe("<b>&lt;b&gt;x&lt;/b&gt;</b><br/>1,234.5 (12.3%)");
  });
});

describe("gauge", () => {
  it("shows the sample margin with the base range and detail formatter", () => {
    const { series } = build("margin_gauge", ["margin_pct"], [{ margin_pct: 37.4 }]);
    expect(series[0]).toMatchObject({ type: "gauge", min: 0, max: 100, detail: { formatter: "{value}%" }, data: [{ value: 37.4, name: "Margin pct" }] });
  });

  it("raises the scale above figures beyond 100 when the base sets no max", () => {
    const option = buildEchartsOption({ series: [{ type: "gauge" }] }, { value: "n" }, { columns: ["n"], rows: [{ n: 1234 }] });
    expect((option.series as Series[])[0].max).toBe(2000);
  });
});

describe("heatmap", () => {
  it("orders weekdays, indexes cells and sets the visual range from the data", () => {
    const { option, series } = build("weekday_heatmap", ["weekday", "channel", "orders"], [
      { weekday: "Wed", channel: "online", orders: 5 },
      { weekday: "Mon", channel: "store", orders: 9 },
      { weekday: "Mon", channel: "online", orders: 2 },
    ]);
    expect((option.xAxis as Obj).data).toEqual(["Mon", "Wed"]);
    expect((option.yAxis as Obj).data).toEqual(["online", "store"]);
    expect(series[0].data).toEqual(
      expect.arrayContaining([
        [1, 0, 5],
        [0, 1, 9],
        [0, 0, 2],
      ]),
    );
    // The sample's base fixes min: 0; max comes from the data.
    expect(option.visualMap).toMatchObject({ min: 0, max: 9, calculable: true });
  });

  it("keeps a usable range when every cell is equal or there are none", () => {
    const option = buildEchartsOption({ series: [{ type: "heatmap" }] }, { x: "a", y: "b", value: "v" }, { columns: ["a", "b", "v"], rows: [] });
    expect(option.visualMap).toMatchObject({ min: 0, max: 1 });
  });
});

describe("radar", () => {
  it("draws the sample's two metrics as shares of their own maximum, tooltips with the real figures", () => {
    const { option, series } = build("category_radar", ["category", "revenue", "orders"], [
      { category: "Coffee", revenue: 1000, orders: 10 },
      { category: "Tea", revenue: 500, orders: 20 },
      { category: "Cake", revenue: 250, orders: 5 },
    ]);
    const radar = option.radar as { shape: string; indicator: Obj[] };
    expect(radar.shape).toBe("polygon");
    expect(radar.indicator).toEqual([
      { name: "Coffee", max: 100, min: 0 },
      { name: "Tea", max: 100, min: 0 },
      { name: "Cake", max: 100, min: 0 },
    ]);
    expect(series[0].data).toEqual([
      { name: "Revenue", raw: [1000, 500, 250], value: [100, 50, 25] },
      { name: "Orders", raw: [10, 20, 5], value: [50, 100, 25] },
    ]);
    const formatter = (option.tooltip as { formatter: (p: Obj) => string }).formatter;
    expect(formatter({ data: series[0].data[0] })).toBe("<b>Revenue</b><br/>Coffee: 1,000<br/>Tea: 500<br/>Cake: 250");
  });

  it("uses real figures on a shared round scale for a single metric", () => {
    const option = buildEchartsOption({ series: [{ type: "radar" }] }, { indicator: "k", value: "v" }, { columns: ["k", "v"], rows: [{ k: "a", v: 30 }, { k: "b", v: 70 }] });
    expect((option.radar as { indicator: Obj[] }).indicator).toEqual([
      { name: "a", max: 100, min: 0 },
      { name: "b", max: 100, min: 0 },
    ]);
    expect((option.series as Series[])[0].data).toEqual([{ name: "V", raw: [30, 70], value: [30, 70] }]);
  });
});

describe("scatter", () => {
  it("plots the sample's locations as named points with labels", () => {
    const { option, series } = build("order_scatter", ["location", "orders", "avg_order"], [
      { location: "Berlin", orders: 120, avg_order: 42.5 },
      { location: "Hamburg", orders: "80", avg_order: 51 },
    ]);
    expect(series[0]).toMatchObject({ type: "scatter", symbolSize: 14, label: { show: true, formatter: "{b}" } });
    expect(series[0].data).toEqual([
      { name: "Berlin", value: [120, 42.5] },
      { name: "Hamburg", value: [80, 51] },
    ]);
    expect(option.xAxis).toMatchObject({ type: "value", name: "orders" });
    const formatter = (option.tooltip as { formatter: (p: Obj) => string }).formatter;
    expect(formatter({ name: "Berlin", value: [120, 42.5] })).toBe("<b>Berlin</b><br/>Orders: 120<br/>Avg order: 42.5");
  });
});

describe("helpers", () => {
  it("orders categories naturally when they are dates, numbers or weekdays", () => {
    expect(orderedCategories(["2026-03", "2026-01", "2026-02", "2026-01"])).toEqual(["2026-01", "2026-02", "2026-03"]);
    expect(orderedCategories([10, 9, 100])).toEqual(["9", "10", "100"]);
    expect(orderedCategories(["Sun", "Mon", "Fri"])).toEqual(["Mon", "Fri", "Sun"]);
    expect(orderedCategories(["Berlin", "Aachen", null])).toEqual(["Berlin", "Aachen", "(none)"]);
  });

  it("rounds scale maxima up to 1, 2, 2.5 or 5 times a power of ten", () => {
    expect([0, 1, 3, 24, 101, 1234, 2100, 99_000].map(niceMax)).toEqual([1, 1, 5, 25, 200, 2000, 2500, 100_000]);
  });

  it("lets every explicit base setting win", () => {
    const base: EchartsOption = { tooltip: { trigger: "none" }, legend: { show: false }, grid: { left: 50 }, series: [{ type: "bar" }, { type: "line" }] };
    const option = buildEchartsOption(base, { x: "k", y: ["a", "b"] }, { columns: ["k", "a", "b"], rows: [{ k: "x", a: 1, b: 2 }] });
    expect(option.tooltip).toMatchObject({ trigger: "none" });
    expect(option.legend).toEqual({ show: false });
    expect(option.grid).toEqual({ left: 50 });
    expect((option.series as Series[]).map((s) => s.type)).toEqual(["bar", "line"]);
  });
});

describe("HTML in tooltips", () => {
  const hostile = "<img src=x onerror=window.__pwned=1>";
  const formatterOf = (option: EchartsOption) => (option.tooltip as { formatter: (params: unknown) => string }).formatter;

  it("escapes names and values from data in every tooltip built here", () => {
    const scatterOption = buildEchartsOption({ xAxis: { type: "category" }, series: [{ type: "scatter" }] }, { x: "who", y: "n", label: "who" }, { columns: ["who", "n"], rows: [{ who: hostile, n: 1 }] });
    const scatterText = formatterOf(scatterOption)({ name: hostile, value: [hostile, 1] });
    const pieText = formatterOf(buildEchartsOption({ series: [{ type: "pie" }] }, { label: "who", value: "n" }, { columns: ["who", "n"], rows: [{ who: hostile, n: 1 }] }))({ name: hostile, value: hostile, percent: 100 });
    const heatmap = buildEchartsOption({ series: [{ type: "heatmap" }] }, { x: "who", y: "who", value: "n" }, { columns: ["who", "n"], rows: [{ who: hostile, n: 1 }] });
    const heatmapText = formatterOf(heatmap)({ value: [0, 0, 1] });
    for (const text of [scatterText, pieText, heatmapText]) {
      expect(text).not.toContain("<img");
      expect(text).toContain("&lt;img");
    }
  });

  it("drops a stored hostile formatter instead of handing it to ECharts", () => {
    const option = buildEchartsOption({ tooltip: { formatter: hostile }, series: [{ type: "bar", name: hostile }] }, { x: "who", y: "n" }, { columns: ["who", "n"], rows: [{ who: "a", n: 1 }] });
    expect(JSON.stringify(option)).not.toContain("<img");
  });
});
