"use client";

import { useEffect, useMemo, useRef, useState } from "react";
import type { ECharts } from "@/components/dashboards/widgets/echarts/core";
import { loadEcharts } from "@/components/dashboards/widgets/echarts/load";
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

/**
 * Deliveries per hour by outcome over the window, stacked; an explanation instead of empty axes when there are none.
 * ECharts' core and its bar chart only, loaded with the chart (the dashboards' loader), not the whole library.
 */
export function HealthChart({ series, from, to }: { series: Bucket[]; from: string; to: string }) {
  const host = useRef<HTMLDivElement>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const option = useMemo(
    () => ({
      animation: false,
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
    }),
    [series, from, to],
  );
  const empty = series.length === 0;

  // One instance for the chart's life; a new window or a refresh sets its option (declared first: a new instance draws the latest).
  const chart = useRef<ECharts | null>(null);
  const shown = useRef(option);
  useEffect(() => {
    shown.current = option;
    chart.current?.setOption(option, { notMerge: true });
  }, [option]);
  useEffect(() => {
    const element = host.current;
    if (empty || !element) return;
    let live = true;
    let dispose = () => {};
    loadEcharts(["bar"]).then(
      (core) => {
        if (!live) return;
        const instance = core.init(element, undefined, { renderer: "canvas" });
        instance.setOption(shown.current, { notMerge: true });
        chart.current = instance;
        const observer = new ResizeObserver(() => instance.resize());
        observer.observe(element);
        dispose = () => {
          observer.disconnect();
          instance.dispose();
          chart.current = null;
        };
      },
      (error: unknown) => {
        if (live) setFailure(error instanceof Error ? error.message : String(error));
      },
    );
    return () => {
      live = false;
      dispose();
    };
  }, [empty]);

  if (empty) return <p className="empty-state">No deliveries in this window yet. Trigger a rule to see its deliveries here.</p>;
  if (failure) return <p role="alert">The chart could not start: {failure}</p>;
  return <div ref={host} className={styles.chart} role="img" aria-label="Deliveries per hour by outcome" />;
}
