"use client";

import { useContext, useEffect, useMemo, useRef, useState } from "react";
import type { WidgetManifest } from "@/lib/manifest/schema";
import type { ChartType } from "@/lib/manifest/echarts-option-allow-list";
import type { ColumnFormats } from "@/lib/dashboards/column-formats";
import { usePrefersDark } from "./color-scheme";
import { useChartBox } from "./chart-box";
import { buildEchartsOption, chartType, type ChartData } from "@/lib/dashboards/chart-option";
import type { ChartClick } from "@/lib/dashboards/chart-clicks";
import { ChartClickContext } from "../chart-click-context";
import { loadEcharts, optionKinds } from "./echarts/load";
import type { ECharts } from "./echarts/core";
import styles from "./widgets.module.css";

interface ChartWidgetProps {
  widget: WidgetManifest;
  columns: string[];
  rows: Record<string, unknown>[];
  /** The declared formats of the widget's columns, for tooltips. */
  formats: ColumnFormats;
}

/** Charts this far below the fold start loading before they are scrolled to, so they are drawn when they arrive. */
const LOOK_AHEAD = "200px";

/** Whether the element has come near the viewport once (it stays true): a chart off screen costs nothing until then. */
function useSeen(ref: React.RefObject<HTMLElement | null>): boolean {
  const [seen, setSeen] = useState(false);
  useEffect(() => {
    const element = ref.current;
    if (!element || seen) return;
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) {
          observer.disconnect();
          setSeen(true);
        }
      },
      { rootMargin: LOOK_AHEAD },
    );
    observer.observe(element);
    return () => observer.disconnect();
  }, [ref, seen]);
  return seen;
}

type Core = Awaited<ReturnType<typeof loadEcharts>>;

/**
 * An ECharts chart from the manifest's base option and the widget's rows; follows the page's colour scheme, and
 * resizes with its grid cell with labels laid out again for the new box (every axis label shown or turned, pie and
 * radar labels never cut). Nothing runs for it until it comes near the viewport: then its option is built once for
 * its measured box, the ECharts modules of its chart kinds are fetched (shared by every chart of the page) and one
 * chart instance is created, which later data and sizes update (only a theme change makes a new one).
 */
export function ChartWidget({ widget, columns, rows, formats }: ChartWidgetProps) {
  const dark = usePrefersDark();
  const base = widget.spec.display.echarts?.option;
  const mappings = widget.spec.data?.mappings;
  const { ref, box, measureText } = useChartBox<HTMLDivElement>();
  const seen = useSeen(ref);
  // Built for the measured box only: a size-free option would be replaced as soon as the box is known.
  const option = useMemo(() => {
    if (!seen || !box) return null;
    const built = buildEchartsOption(base, mappings, { columns, rows }, { box, measureText, formats });
    // Transparent so the card's surface (light or dark) shows through. No animation unless the manifest's option
    // asks for it: ECharts redraws the whole canvas on every frame while it animates (a second after each update by
    // default), which kept the main thread busy for as long after every filter change (docs/dashboards-viewer.md).
    return { backgroundColor: "transparent", animation: false, ...built };
  }, [seen, base, mappings, columns, rows, box, measureText, formats]);
  const kinds = option ? optionKinds(option).join(",") : null;

  const [loaded, setLoaded] = useState<{ kinds: string; core: Core } | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  useEffect(() => {
    if (kinds === null) return;
    let live = true;
    loadEcharts(kinds ? (kinds.split(",") as ChartType[]) : []).then(
      (core) => {
        if (live) setLoaded({ kinds, core });
      },
      (error: unknown) => {
        if (live) setFailure(error instanceof Error ? error.message : String(error));
      },
    );
    return () => {
      live = false;
    };
  }, [kinds]);
  const ready = loaded !== null && loaded.kinds === kinds;
  const core = loaded?.core ?? null;

  const pointClicked = useContext(ChartClickContext);
  const clickable = pointClicked !== null && widget.spec.on_click !== undefined;
  const onClick = useRef<((params: ChartClick) => void) | null>(null);
  useEffect(() => {
    onClick.current = clickable ? (params) => pointClicked(widget, params, { columns, rows } satisfies ChartData) : null;
  }, [clickable, pointClicked, widget, columns, rows]);

  const host = useRef<HTMLDivElement>(null);
  const chart = useRef<ECharts | null>(null);
  // The last option whose chart kinds are registered: what a new instance draws first.
  const shown = useRef<Record<string, unknown> | null>(null);
  // Declared before the instance's effect: in a commit that changes both, the new instance draws the new option.
  useEffect(() => {
    if (!ready || !option) return;
    shown.current = option;
    chart.current?.setOption(option, { notMerge: true });
  }, [option, ready]);
  useEffect(() => {
    const element = host.current;
    if (!core || !element) return;
    const instance = core.init(element, dark ? "dark" : undefined, { renderer: "canvas" });
    // Bound once for the instance's life; it calls the latest handler.
    instance.on("click", (params) => onClick.current?.(params as unknown as ChartClick));
    if (shown.current) instance.setOption(shown.current, { notMerge: true });
    chart.current = instance;
    const observer = new ResizeObserver(() => {
      if (element.clientWidth !== instance.getWidth() || element.clientHeight !== instance.getHeight()) instance.resize();
    });
    observer.observe(element);
    return () => {
      observer.disconnect();
      instance.dispose();
      chart.current = null;
    };
  }, [core, dark]);

  if (failure) {
    return (
      <div className={styles.errorState} role="alert">
        <strong>The chart could not start.</strong>
        <span>{failure}</span>
      </div>
    );
  }
  return (
    <div ref={ref} className={styles.chart} role="img" aria-label={`${widget.metadata.name}: ${chartType(base ?? {}, mappings)} chart`}>
      <div ref={host} className={styles.chartCanvas} />
    </div>
  );
}
