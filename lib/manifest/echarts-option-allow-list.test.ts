import { describe, expect, it } from "vitest";
import { echartsOptionProblems, formatterProblem, withoutUnsafeParts } from "./echarts-option-allow-list";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";

const messages = (option: Record<string, unknown>) => echartsOptionProblems(option).map((p) => `${p.path.join(".")}: ${p.message}`);

describe("ECharts formatter templates", () => {
  it.each(["{b}: {c}", "{a0} {b0} {c0} ({d}%)", "{value}%", "{@revenue} €", "{@[1]}", "{title|{b}}\n{value|{c}}", "{yyyy}-{MM}-{dd}", "plain text", "a & b"])(
    "accepts %j",
    (template) => expect(formatterProblem(template)).toBeNull(),
  );

  it.each([
    ["<img src=x onerror=alert(1)>", /HTML/],
    ["{b}<br/>{c}", /HTML/],
    ["{b} > {c}", /HTML/],
    ["{constructor.constructor}", /template references/],
    ["{b", /template references/],
    ["javascript:alert(1)", /script URL/],
    ["java\tscript:alert(1)", /script URL/],
  ])("refuses %j", (template, message) => expect(formatterProblem(template)).toMatch(message));
});

describe("ECharts option allow-list", () => {
  it("accepts the options of the sample dashboard's chart types", () => {
    expect(messages({ tooltip: { trigger: "axis" }, xAxis: { type: "category", name: "Day" }, yAxis: { type: "value" }, series: [{ type: "line", smooth: true, areaStyle: {} }] })).toEqual([]);
    expect(messages({ series: [{ type: "gauge", min: 0, max: 100, detail: { formatter: "{value}%" } }] })).toEqual([]);
    expect(messages({ visualMap: { min: 0, calculable: true }, series: [{ type: "heatmap" }] })).toEqual([]);
    expect(messages({ radar: { shape: "circle" }, series: [{ type: "radar" }] })).toEqual([]);
    expect(messages({ series: { type: "pie", radius: ["40%", "70%"], label: { formatter: "{b}: {d}%" } } })).toEqual([]);
  });

  it("refuses keys that do not belong to the chart type", () => {
    expect(messages({ xAxis: {}, series: [{ type: "pie" }] })).toEqual([expect.stringMatching(/^xAxis: 'xAxis' is not an allowed option for pie charts/)]);
    expect(messages({ series: [{ type: "bar", radius: "50%" }] })).toEqual([expect.stringMatching(/^series\.0\.radius: /)]);
    expect(messages({ series: [{ type: "candlestick" }] })).toEqual([expect.stringMatching(/^series\.0\.type: series type must be one of/)]);
  });

  it("refuses every HTML and navigation surface", () => {
    expect(messages({ tooltip: { formatter: "<img src=x onerror=alert(1)>" } })).toEqual([expect.stringMatching(/^tooltip\.formatter: formatter may not contain HTML/)]);
    expect(messages({ tooltip: { extraCssText: "background:url(//evil)" } })).toEqual([expect.stringMatching(/^tooltip\.extraCssText: 'extraCssText' is not allowed/)]);
    expect(messages({ tooltip: { renderMode: "html" } })).toEqual([expect.stringMatching(/^tooltip\.renderMode: /)]);
    expect(messages({ title: { text: "Sales", link: "javascript:alert(1)" } })).toEqual([expect.stringMatching(/^title\.link: 'link' is not allowed/)]);
    expect(messages({ toolbox: { feature: { dataView: {} } } })).toEqual([expect.stringMatching(/^toolbox: /)]);
    expect(messages({ series: [{ type: "bar", name: "<script>alert(1)</script>" }] })).toEqual([expect.stringMatching(/^series\.0\.name: HTML is not allowed/)]);
    expect(messages({ series: [{ type: "bar", label: { formatter: "<b>{c}</b>" } }] })).toEqual([expect.stringMatching(/^series\.0\.label\.formatter: /)]);
    expect(messages({ series: [{ type: "scatter", symbol: "image://javascript:alert(1)" }] })).toEqual([expect.stringMatching(/script URLs/)]);
    expect(messages({ tooltip: { formatter: { toString: "x" } } })).toEqual([expect.stringMatching(/formatter must be an ECharts template string/)]);
  });

  it("strips the unsafe parts of an option stored before the rules, keeping the rest", () => {
    const cleaned = withoutUnsafeParts({ tooltip: { trigger: "item", formatter: "<img src=x onerror=alert(1)>" }, toolbox: {}, series: [{ type: "bar", name: "<b>x</b>", smooth: true }] });
    expect(cleaned).toEqual({ tooltip: { trigger: "item" }, series: [{ type: "bar", smooth: true }] });
  });
});

describe("manifest validation of chart options", () => {
  const manifest = (option: string) => `version: "1.0"
kind: dashboard
metadata: { id: d, name: D }
spec:
  tabs: [{ id: main, name: Main, widgets: [chart] }]
---
version: "1.0"
kind: widget
metadata: { id: chart, name: Chart }
spec:
  component: echarts
  layout: { x: 0, y: 0, w: 6, h: 4 }
  data: { kind: static, rows: [{ a: x, b: 1 }] }
  display:
    echarts:
      option:
${option}`;

  it("reports a hostile tooltip formatter with its line and column", () => {
    const result = parseDashboardYaml(manifest(`        tooltip:\n          formatter: "<img src=x onerror=alert(1)>"\n        series: [{ type: bar }]`));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toEqual([
      expect.objectContaining({ document: 1, line: 18, column: 22, path: ["spec", "display", "echarts", "option", "tooltip", "formatter"], message: expect.stringMatching(/HTML/) }),
    ]);
  });

  it("reports a key outside the allow-list at the key", () => {
    const result = parseDashboardYaml(manifest(`        series: [{ type: pie }]\n        xAxis: { type: category }`));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors[0]).toMatchObject({ line: 18, path: ["spec", "display", "echarts", "option", "xAxis"] });
  });
});
