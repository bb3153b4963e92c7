import { describe, expect, it } from "vitest";
import { bottomCategoryLabels, buildEchartsOption, chartType, estimateTextWidth, niceMax, orderedCategories, timeCategories, type EchartsOption } from "./chart-option";
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
    // Each label reads towards the middle of the plot, so the outermost stay clear of the value axis.
    expect(series[0].data).toEqual([
      { name: "Berlin", value: [120, 42.5], label: { align: "right" } },
      { name: "Hamburg", value: [80, 51], label: { align: "left" } },
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

describe("charts that fit their box (issue 27)", () => {
  const locations = ["Austin South Congress", "Boston Back Bay", "Chicago Loop", "Manhattan Flagship", "San Francisco Union Sq"];
  const byLocation = { columns: ["location", "revenue"], rows: locations.map((location, i) => ({ location, revenue: 60_000 + i * 1000 })) };
  const revenueByLocation = (box: { width: number; height: number }) => {
    const widget = sampleWidget("revenue_by_location");
    return buildEchartsOption(widget.spec.display.echarts?.option, widget.spec.data?.mappings, byLocation, { box });
  };
  const labelOf = (option: EchartsOption, axisKey: "xAxis" | "yAxis") => (option[axisKey] as Obj).axisLabel as Obj;

  it("labels every bar of Revenue by location, turned so neighbours do not touch and cut nowhere, on a desktop card and on a phone", () => {
    for (const box of [{ width: 380, height: 300 }, { width: 350, height: 290 }, { width: 260, height: 290 }]) {
      const label = labelOf(revenueByLocation(box), "xAxis");
      expect(label.interval, JSON.stringify(box)).toBe(0);
      expect(label.hideOverlap).toBe(false);
      const rotate = label.rotate as number;
      expect(rotate).toBeGreaterThan(0);
      // Neighbouring turned labels are at least a line apart, so ECharts has nothing to hide.
      const slot = (box.width - 64) / locations.length;
      expect(slot * Math.sin((rotate * Math.PI) / 180)).toBeGreaterThanOrEqual(16);
      // Whole: no width to cut them at.
      expect(label.overflow).toBeUndefined();
    }
  });

  it("keeps labels straight where they fit, wraps or shrinks them before cutting, and cuts only with a tooltip", () => {
    expect(labelOf(revenueByLocation({ width: 1200, height: 300 }), "xAxis")).toMatchObject({ interval: 0, rotate: 0 });
    // Two words a line each where their slot is wide enough.
    expect(labelOf(revenueByLocation({ width: 640, height: 300 }), "xAxis")).toMatchObject({ interval: 0, rotate: 0, overflow: "break" });
    // A4's narrowest card: upright and smaller, every name whole.
    expect(labelOf(revenueByLocation({ width: 164, height: 175 }), "xAxis")).toMatchObject({ interval: 0, rotate: 90, fontSize: 9 });
    // Names that cannot fit whole are cut, and the axis then shows them whole in a tooltip.
    const cut = buildEchartsOption({ series: [{ type: "bar" }] }, { x: "location", y: "revenue" }, { columns: ["location", "revenue"], rows: locations.map((location) => ({ location: location.repeat(4), revenue: 1 })) }, { box: { width: 300, height: 120 } });
    expect((cut.xAxis as Obj).axisLabel).toMatchObject({ overflow: "truncate" });
    expect((cut.xAxis as Obj).tooltip).toEqual({ show: true });
    // Without a box (no layout known) ECharts leaves out what overlaps; nothing is cut.
    expect(bottomCategoryLabels(locations, {})).toEqual({ hideOverlap: true });
  });

  it("labels date categories by their grain, as many as fit", () => {
    const days = Array.from({ length: 31 }, (_, i) => `2026-10-${String(i + 1).padStart(2, "0")}`);
    expect(timeCategories(days)?.grain).toBe("day");
    expect(timeCategories(days)?.label("2026-10-01")).toBe("Oct 1");
    expect(timeCategories(["2025-12-31", "2026-01-01"])?.label("2026-01-01")).toBe("Jan 1, 2026");
    const weeks = ["2026-10-05", "2026-10-12", "2026-10-26"];
    expect(timeCategories(weeks)?.grain).toBe("week");
    expect(timeCategories(weeks)?.label("2026-10-05")).toBe("Week 41");
    expect(timeCategories(["2026-10-01", "2026-11-01T00:00:00Z"])?.label("2026-10-01")).toBe("Oct 2026");
    expect(timeCategories(["2026-10", "2026-11"])?.grain).toBe("month");
    expect(timeCategories(["Berlin", "2026-10-01"])).toBeNull();
    // A phone fits every fourth day ("Oct 1", "Oct 5", …); the categories stay the raw dates a click reads.
    const widget = sampleWidget("revenue_trend");
    const rows = days.map((order_date, i) => ({ order_date, revenue: 1000 + i }));
    const option = buildEchartsOption(widget.spec.display.echarts?.option, widget.spec.data?.mappings, { columns: ["order_date", "revenue"], rows }, { box: { width: 340, height: 300 } });
    const axisOption = option.xAxis as Obj & { axisLabel: { formatter: (v: string) => string; interval: number } };
    expect(axisOption.data).toEqual(days);
    expect(axisOption.axisLabel.formatter("2026-10-05")).toBe("Oct 5");
    expect(axisOption.axisLabel.interval).toBeGreaterThan(0);
    expect(((340 - 64) / 31) * (axisOption.axisLabel.interval + 1)).toBeGreaterThanOrEqual(estimateTextWidth("Oct 31") + 12);
  });

  it("gives a pie's outside labels room: the ring shrinks in proportion so 'store' is never cut, and a tiny box uses the legend", () => {
    const widget = sampleWidget("channel_mix");
    const data = { columns: ["channel", "revenue"], rows: [{ channel: "store", revenue: 700 }, { channel: "online", revenue: 200 }, { channel: "partner", revenue: 100 }] };
    const build = (box: { width: number; height: number }) => (buildEchartsOption(widget.spec.display.echarts?.option, widget.spec.data?.mappings, data, { box }).series as Obj[])[0];
    const phone = build({ width: 340, height: 290 });
    const [inner, outer] = phone.radius as number[];
    expect(outer + estimateTextWidth("partner") + 40).toBeLessThanOrEqual(340 / 2);
    expect(inner / outer).toBeCloseTo(40 / 70, 1);
    expect(phone.label).toMatchObject({ show: true });
    // Where the base radius leaves room, it is kept.
    expect(build({ width: 900, height: 290 }).radius).toEqual(["40%", "70%"]);
    expect(build({ width: 120, height: 120 }).label).toMatchObject({ show: false });
  });

  it("sizes the radar so its indicator names ('Appliances') stay inside a phone-width box", () => {
    const widget = sampleWidget("category_radar");
    const categories = ["Accessories", "Appliances", "Coffee", "Services"];
    const data = { columns: ["category", "revenue", "orders"], rows: categories.map((category, i) => ({ category, revenue: 1000 * (i + 1), orders: 10 * (i + 1) })) };
    for (const width of [300, 340, 390]) {
      const radar = buildEchartsOption(widget.spec.display.echarts?.option, widget.spec.data?.mappings, data, { box: { width, height: 290 } }).radar as Obj;
      expect(typeof radar.radius).toBe("number");
      expect((radar.radius as number) + estimateTextWidth("Appliances") + 12, `width ${width}`).toBeLessThanOrEqual(width / 2);
    }
  });

  it("hides scatter labels that would overlap (a series option)", () => {
    const widget = sampleWidget("order_scatter");
    const data = { columns: ["location", "orders", "avg_order"], rows: locations.map((location, i) => ({ location, orders: 1000 + i, avg_order: 60 + i / 10 })) };
    const option = buildEchartsOption(widget.spec.display.echarts?.option, widget.spec.data?.mappings, data, { box: { width: 340, height: 290 } });
    expect((option.series as Obj[])[0].labelLayout).toEqual({ hideOverlap: true });
    expect(option.labelLayout).toBeUndefined();
  });

  it("shows tooltips in the columns' declared formats", () => {
    const option = buildEchartsOption({ series: [{ type: "bar" }] }, { x: "location", y: "revenue" }, byLocation, { formats: { revenue: "currency" } });
    const formatter = ((option.series as Obj[])[0].tooltip as { valueFormatter: (v: unknown) => string }).valueFormatter;
    expect(formatter(311191.674)).toBe("$311,191.67");
    const pie = buildEchartsOption({ series: [{ type: "pie" }] }, { label: "location", value: "revenue" }, byLocation, { formats: { revenue: "currency" } });
    expect(((pie.tooltip as Obj).formatter as (p: Obj) => string)({ name: "Austin", value: 1234.5, percent: 20 })).toBe("<b>Austin</b><br/>$1,234.50 (20%)");
  });
});
