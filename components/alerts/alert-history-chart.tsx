"use client";

import { useEffect, useRef } from "react";
import type { AlertCondition, AlertEvaluationView } from "@/lib/alerts/contract";
import { formatNumber } from "@/lib/dashboards/format";
import { loadEcharts } from "@/components/dashboards/widgets/echarts/load";
import styles from "./alerts.module.css";

interface Props {
  evaluations: readonly AlertEvaluationView[];
  condition: AlertCondition;
  /** Accessible name of the chart. */
  label: string;
}

/** How each outcome is drawn: met and not met told apart by colour and by shape (so not by colour alone). */
const OUTCOMES = [
  { name: "Met", test: (e: AlertEvaluationView) => e.met === true, color: "#dc2626", symbol: "triangle" },
  { name: "Not met", test: (e: AlertEvaluationView) => e.met === false, color: "#16a34a", symbol: "circle" },
  { name: "Not judged", test: (e: AlertEvaluationView) => e.met === null, color: "#94a3b8", symbol: "diamond" },
] as const;

/** The thresholds the value is judged against, as horizontal lines (a change is judged on the change, not the value). */
function thresholdLines(condition: AlertCondition): { name: string; yAxis: number }[] {
  if (condition.kind === "above" || condition.kind === "below") return [{ name: "Threshold", yAxis: condition.threshold }];
  if (condition.kind === "outside")
    return [
      { name: "Low", yAxis: condition.low },
      { name: "High", yAxis: condition.high },
    ];
  return [];
}

/**
 * An alert's evaluations over time (issue 45 §3): the value as a line, each evaluation a point whose colour and shape
 * say met, not met or not judged (no data, below the minimum volume, an error), and the thresholds as lines. ECharts
 * through the viewer's lazy modules (line and scatter only); its ARIA description is on, and the table beside it on
 * the page carries the same figures for screen readers and keyboards.
 */
export function AlertHistoryChart({ evaluations, condition, label }: Props) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    let disposed = false;
    let chart: { dispose(): void; resize(): void } | null = null;
    const oldestFirst = [...evaluations].reverse();
    const point = (e: AlertEvaluationView) => [e.evaluated_at, e.value];
    void loadEcharts(["line", "scatter"]).then(({ init }) => {
      if (disposed) return;
      const instance = init(element, undefined, { renderer: "canvas" });
      chart = instance;
      instance.setOption({
        aria: { enabled: true, label: { description: label } },
        animation: false,
        grid: { left: 56, right: 16, top: 32, bottom: 32 },
        legend: { top: 0, data: OUTCOMES.map((o) => o.name) },
        tooltip: { trigger: "item" },
        xAxis: { type: "time" },
        yAxis: { type: "value", scale: true, axisLabel: { formatter: (v: number) => formatNumber(v) } },
        series: [
          {
            name: "Value",
            type: "line",
            showSymbol: false,
            data: oldestFirst.filter((e) => e.value !== null).map(point),
            lineStyle: { color: "#64748b", width: 1.5 },
            markLine: { symbol: "none", lineStyle: { type: "dashed", color: "#0f172a" }, label: { formatter: "{b}: {c}" }, data: thresholdLines(condition) },
          },
          ...OUTCOMES.map((o) => ({
            name: o.name,
            type: "scatter",
            symbol: o.symbol,
            symbolSize: 10,
            itemStyle: { color: o.color },
            // Evaluations without a value sit on the axis' floor, so "no data" still shows when it happened.
            data: oldestFirst.filter(o.test).map((e) => [e.evaluated_at, e.value ?? 0]),
          })),
        ],
      });
    });
    const resize = () => chart?.resize();
    window.addEventListener("resize", resize);
    return () => {
      disposed = true;
      window.removeEventListener("resize", resize);
      chart?.dispose();
    };
  }, [evaluations, condition, label]);
  return <div ref={box} className={styles.chart} role="img" aria-label={label} data-testid="alert-history-chart" />;
}
