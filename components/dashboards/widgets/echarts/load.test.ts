import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { buildEchartsOption, type ChartData, type EchartsOption } from "@/lib/dashboards/chart-option";
import type { ChartType } from "@/lib/manifest/echarts-option-allow-list";
import { optionKinds } from "./load";

const run = promisify(execFile);

const days: ChartData = { columns: ["day", "revenue", "cost"], rows: [{ day: "2026-01-01", revenue: 10, cost: 4 }, { day: "2026-01-02", revenue: 12, cost: 5 }] };
const axes = { xAxis: { type: "category" }, yAxis: { type: "value" } };

/** One option per chart kind as the viewer builds it, with the parts that bring components: legend, tooltip, visual map, marks. */
const SAMPLES: Record<ChartType, EchartsOption> = {
  line: buildEchartsOption({ ...axes, series: [{ type: "line", areaStyle: {}, markLine: { data: [{ type: "average" }] } }] }, { x: "day", y: ["revenue", "cost"] }, days),
  bar: buildEchartsOption({ ...axes, series: [{ type: "bar" }], dataZoom: [{ type: "inside" }] }, { x: "day", y: "revenue" }, days),
  scatter: buildEchartsOption({ xAxis: { type: "value" }, yAxis: { type: "value" }, series: [{ type: "scatter", label: { show: true } }] }, { x: "revenue", y: "cost", label: "day" }, days),
  heatmap: buildEchartsOption({ xAxis: { type: "category" }, yAxis: { type: "category" }, series: [{ type: "heatmap" }] }, { x: "day", y: "channel", value: "orders" }, { columns: ["day", "channel", "orders"], rows: [{ day: "Mon", channel: "web", orders: 3 }, { day: "Tue", channel: "store", orders: 5 }] }),
  pie: buildEchartsOption({ series: [{ type: "pie", radius: ["40%", "70%"] }] }, { label: "day", value: "revenue" }, days),
  gauge: buildEchartsOption({ series: [{ type: "gauge", min: 0, max: 100 }] }, { value: "revenue" }, days),
  radar: buildEchartsOption({ series: [{ type: "radar" }] }, { indicator: "day", value: ["revenue", "cost"] }, days),
};

// Each kind alone in a fresh process (ECharts' registry is process-wide): its module must register everything its
// option uses. ECharts reports a series or component used but not registered on the console outside production.
const PROBE = `
const [kindFile, optionJson] = process.argv.slice(-2);
const complaints = [];
console.warn = console.error = (...args) => complaints.push(args.join(" "));
const core = await import("echarts/core");
const { SVGRenderer } = await import("echarts/renderers");
core.use([SVGRenderer]);
await import(kindFile);
const chart = core.init(null, null, { ssr: true, renderer: "svg", width: 480, height: 320 });
chart.setOption(JSON.parse(optionJson));
const svg = chart.renderToSVGString();
// Disposed and exited: an instance keeps its animation timer, which would hold the process open.
chart.dispose();
process.stdout.write(JSON.stringify({ complaints, shapes: (svg.match(/<path/g) ?? []).length }));
process.exit(0);
`;

describe("ECharts modules per chart kind", () => {
  it("names the kinds a built option draws", () => {
    expect(optionKinds(SAMPLES.line)).toEqual(["line"]);
    expect(optionKinds(SAMPLES.radar)).toEqual(["radar"]);
    expect(optionKinds({ series: [{ type: "bar" }, { type: "line" }, { type: "bar" }] })).toEqual(["bar", "line"]);
    expect(optionKinds({ series: { type: "pie" } })).toEqual(["pie"]);
    expect(optionKinds({ series: [{ type: "sunburst" }] })).toEqual([]);
  });

  // A process each (a few seconds apiece on a loaded machine), side by side.
  it.concurrent.each(Object.keys(SAMPLES) as ChartType[])("%s: its module alone draws its option with nothing missing", { timeout: 120_000 }, async (kind) => {
    expect(optionKinds(SAMPLES[kind])).toEqual([kind]);
    const file = path.join(import.meta.dirname, `${kind}.ts`);
    const { stdout } = await run(process.execPath, ["--import", "tsx", "--input-type=module", "-e", PROBE, file, JSON.stringify(SAMPLES[kind])], { cwd: import.meta.dirname, env: { ...process.env, NODE_ENV: "development" } });
    const { complaints, shapes } = JSON.parse(stdout) as { complaints: string[]; shapes: number };
    expect(complaints).toEqual([]);
    expect(shapes).toBeGreaterThan(0);
  });
});
