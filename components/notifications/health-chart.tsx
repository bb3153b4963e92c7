"use client";

import ReactECharts from "echarts-for-react";
import styles from "./notifications.module.css";

interface Bucket {
  bucket: string;
  delivered: number;
  dead: number;
  skipped: number;
  in_flight: number;
}

const SERIES = [
  { key: "delivered", name: "Delivered", color: "#1a7f4b" },
  { key: "dead", name: "Dead", color: "#c62f2f" },
  { key: "skipped", name: "Skipped", color: "#8a94a6" },
  { key: "in_flight", name: "In flight", color: "#2f6fed" },
] as const;

/** Deliveries per hour by outcome over the window, stacked; an explanation instead of empty axes when there are none. */
export function HealthChart({ series, from, to }: { series: Bucket[]; from: string; to: string }) {
  if (series.length === 0) return <p className="empty-state">No deliveries in this window yet. Trigger a rule to see its deliveries here.</p>;
  const option = {
    tooltip: { trigger: "axis" },
    legend: { top: 0 },
    grid: { left: 40, right: 16, top: 36, bottom: 28 },
    // On a phone three days of hourly ticks crowd each other; overlapping labels are dropped rather than drawn on top.
    xAxis: { type: "time", min: from, max: to, axisLabel: { hideOverlap: true } },
    yAxis: { type: "value", minInterval: 1 },
    series: SERIES.map((s) => ({
      name: s.name,
      type: "bar",
      stack: "deliveries",
      barMaxWidth: 18,
      itemStyle: { color: s.color },
      data: series.map((b) => [b.bucket, b[s.key]]),
    })),
  };
  return <ReactECharts className={styles.chart} option={option} notMerge role="img" aria-label="Deliveries per hour by outcome" />;
}
