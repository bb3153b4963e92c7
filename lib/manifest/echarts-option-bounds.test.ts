import { describe, expect, it } from "vitest";
import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import { optionBoundProblems, withinBounds } from "./echarts-option-bounds";

const messages = (option: Record<string, unknown>) => optionBoundProblems(option).map((p) => `${p.path.join(".")}: ${p.message}`);

/** The option that made resvg panic and the server exit (issue 41). */
const CRASH = { series: [{ type: "pie", radius: ["0%", "100000000%"], label: { fontSize: 1000000, position: "inside" } }] };

describe("ECharts option bounds", () => {
  it("accepts the sizes real charts use", () => {
    expect(messages({ legend: { left: "center", top: 8, itemGap: 12 }, grid: { left: "3%", right: 16, bottom: "10%" }, series: [{ type: "pie", radius: ["40%", "70%"], center: ["50%", "45%"], label: { fontSize: 14 } }] })).toEqual([]);
    expect(messages({ series: [{ type: "line", symbolSize: 14, lineStyle: { width: 3 }, barWidth: "60%" }], xAxis: { axisLabel: { rotate: 45, margin: 8 } } })).toEqual([]);
    expect(messages({ series: [{ type: "gauge", axisLine: { lineStyle: { width: 18 } }, detail: { offsetCenter: [0, "40%"] }, pointer: { width: 6 } }], title: { padding: [4, 8] } })).toEqual([]);
    expect(messages({ legend: { left: null } })).toEqual([]);
  });

  it("refuses the crash payload and other meaningless geometry, each at its path", () => {
    expect(messages(CRASH)).toEqual([expect.stringMatching(/^series\.0\.radius\.1: "100000000%" is out of range: must be .*'200%'/), expect.stringMatching(/^series\.0\.label\.fontSize: 1000000 is out of range: must be a number from 1 to 200$/)]);
    expect(messages({ series: [{ type: "line", symbolSize: [1e9, 2], lineStyle: { width: 5000 } }] })).toEqual([expect.stringMatching(/^series\.0\.symbolSize\.0: /), expect.stringMatching(/^series\.0\.lineStyle\.width: 5000 is out of range: must be a number from 0 to 100$/)]);
    expect(messages({ title: { textStyle: { fontSize: "huge" } }, legend: { padding: [1, 2, 3, 4, 5] }, series: [{ type: "pie", center: "50%" }] })).toEqual([
      expect.stringMatching(/^title\.textStyle\.fontSize: must be a number/),
      expect.stringMatching(/^legend\.padding: must be .*list of up to 4/),
      // center is a pair only: "50%" alone is a percent, which POSITION accepts.
    ]);
    expect(messages({ series: [{ type: "bar", barCategoryGap: "-500%", barGap: "10000%" }], yAxis: { splitNumber: 1e6 } })).toHaveLength(3);
    expect(messages({ series: [{ type: "pie", radius: Number.POSITIVE_INFINITY }] })).toEqual([expect.stringMatching(/^series\.0\.radius: must be/)]);
  });

  it("clamps what was stored before the rule, keeping the rest", () => {
    const clamped = withinBounds({ ...CRASH, title: { text: "Mix", textStyle: { fontSize: "huge", fontWeight: "bold" } } });
    expect(clamped).toEqual({ series: [{ type: "pie", radius: ["0%", "200%"], label: { fontSize: 200, position: "inside" } }], title: { text: "Mix", textStyle: { fontWeight: "bold" } } });
    expect(optionBoundProblems(clamped)).toEqual([]);
    // The input is left as it was; functions the option builder put in (formatters) are kept.
    expect(CRASH.series[0].radius[1]).toBe("100000000%");
    const formatter = (value: number) => `${value} €`;
    expect((withinBounds({ yAxis: { axisLabel: { formatter, fontSize: 900 } } }).yAxis as { axisLabel: unknown }).axisLabel).toEqual({ formatter, fontSize: 200 });
  });
});

describe("manifest validation of chart geometry", () => {
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

  it("reports the crash payload's radius and font size with their lines and columns", () => {
    const result = parseDashboardYaml(manifest(`        series:\n          - type: pie\n            radius: ["0%", "100000000%"]\n            label:\n              fontSize: 1000000`));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors).toEqual([
      expect.objectContaining({ document: 1, line: 19, column: 28, path: ["spec", "display", "echarts", "option", "series", 0, "radius", 1], message: expect.stringMatching(/out of range/) }),
      expect.objectContaining({ document: 1, line: 21, column: 25, path: ["spec", "display", "echarts", "option", "series", 0, "label", "fontSize"], message: expect.stringMatching(/from 1 to 200/) }),
    ]);
  });
});
