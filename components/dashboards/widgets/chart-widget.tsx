"use client";

import dynamic from "next/dynamic";
import { useContext, useMemo } from "react";
import type { WidgetManifest } from "@/lib/manifest/schema";
import type { ColumnFormats } from "@/lib/dashboards/column-formats";
import { usePrefersDark } from "./color-scheme";
import { useChartBox } from "./chart-box";
import { buildEchartsOption, chartType, type ChartData } from "@/lib/dashboards/chart-option";
import type { ChartClick } from "@/lib/dashboards/chart-clicks";
import { ChartClickContext } from "../chart-click-context";
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
  /** The declared formats of the widget's columns, for tooltips. */
  formats: ColumnFormats;
}

/**
 * An ECharts chart from the manifest's base option and the widget's rows; follows the page's colour
 * scheme, and resizes with its grid cell with labels laid out again for the new box (every axis
 * label shown or turned, pie and radar labels never cut).
 */
export function ChartWidget({ widget, columns, rows, formats }: ChartWidgetProps) {
  const dark = usePrefersDark();
  const base = widget.spec.display.echarts?.option;
  const mappings = widget.spec.data?.mappings;
  const { ref, box, measureText } = useChartBox<HTMLDivElement>();
  const option = useMemo(() => {
    const built = buildEchartsOption(base, mappings, { columns, rows }, { box, measureText, formats });
    // Transparent so the card's surface (light or dark) shows through.
    return { backgroundColor: "transparent", animationDuration: 300, ...built };
  }, [base, mappings, columns, rows, box, measureText, formats]);
  const pointClicked = useContext(ChartClickContext);
  const clickable = pointClicked !== null && widget.spec.on_click !== undefined;
  const onEvents = useMemo(() => (clickable ? { click: (params: ChartClick) => pointClicked(widget, params, { columns, rows } satisfies ChartData) } : undefined), [clickable, pointClicked, widget, columns, rows]);
  return (
    <div ref={ref} className={styles.chart} role="img" aria-label={`${widget.metadata.name}: ${chartType(base ?? {}, mappings)} chart`}>
      <ReactECharts
        // A new theme needs a new chart instance.
        key={dark ? "dark" : "light"}
        option={option}
        onEvents={onEvents}
        theme={dark ? "dark" : undefined}
        notMerge
        autoResize
        style={{ height: "100%", width: "100%" }}
        opts={{ renderer: "canvas" }}
      />
    </div>
  );
}
