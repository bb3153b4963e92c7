"use client";

import dynamic from "next/dynamic";
import { useMemo } from "react";
import type { WidgetManifest } from "@/lib/manifest/schema";
import { usePrefersDark } from "./color-scheme";
import { buildEchartsOption, chartType } from "@/lib/dashboards/chart-option";
import styles from "./widgets.module.css";

// ECharts touches window on import, so it loads in the browser only, after the page is painted.
const ReactECharts = dynamic(() => import("echarts-for-react"), {
  ssr: false,
  loading: () => <div className={styles.chartPlaceholder} aria-hidden="true" />,
});

interface ChartWidgetProps {
  widget: WidgetManifest;
  columns: string[];
  rows: Record<string, unknown>[];
}

/** An ECharts chart from the manifest's base option and the widget's rows; resizes with its grid cell and follows the page's colour scheme. */
export function ChartWidget({ widget, columns, rows }: ChartWidgetProps) {
  const dark = usePrefersDark();
  const base = widget.spec.display.echarts?.option;
  const mappings = widget.spec.data?.mappings;
  const option = useMemo(() => {
    const built = buildEchartsOption(base, mappings, { columns, rows });
    // Transparent so the card's surface (light or dark) shows through.
    return { backgroundColor: "transparent", animationDuration: 300, ...built };
  }, [base, mappings, columns, rows]);
  return (
    <div className={styles.chart} role="img" aria-label={`${widget.metadata.name}: ${chartType(base ?? {}, mappings)} chart`}>
      <ReactECharts
        // A new theme needs a new chart instance.
        key={dark ? "dark" : "light"}
        option={option}
        theme={dark ? "dark" : undefined}
        notMerge
        autoResize
        style={{ height: "100%", width: "100%" }}
        opts={{ renderer: "canvas" }}
      />
    </div>
  );
}
