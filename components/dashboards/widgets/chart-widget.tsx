"use client";

import { useCallback, useContext, useEffect, useId, useMemo, useRef, useState } from "react";
import type { WidgetManifest } from "@/lib/manifest/schema";
import type { ChartType } from "@/lib/manifest/echarts-option-allow-list";
import type { ColumnFormats } from "@/lib/dashboards/column-formats";
import { usePrefersDark } from "./color-scheme";
import { useChartBox } from "./chart-box";
import { buildEchartsOption, chartType, type ChartData } from "@/lib/dashboards/chart-option";
import { type ChartClick, chartPoints, nearestPoint } from "@/lib/dashboards/chart-clicks";
import { formatNumber, toNumber } from "@/lib/dashboards/format";
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

/** What a chart that answers clicks says under it: the click's effect, in words. */
function clickHint(widget: WidgetManifest): string {
  return widget.spec.on_click?.set_filters ? "Click a point to filter the page by it" : "Click a point to open its details";
}

/** A point read out for a screen reader while the keyboard walks the chart. */
function describePoint(point: ChartClick): string {
  const values = (Array.isArray(point.value) ? point.value : [point.value]).map((v) => {
    const n = toNumber(v);
    return n === null ? String(v) : formatNumber(n);
  });
  return [point.name, point.seriesName, values.join(", ")].filter(Boolean).join(": ");
}

/**
 * An ECharts chart (echarts-for-react's core component over the kinds' tree-shaken modules) from the manifest's base
 * option and the widget's rows; follows the page's colour scheme, and resizes with its grid cell with labels laid out
 * again for the new box (lib/dashboards/chart-option.ts). Nothing runs for it until it comes near the viewport: then
 * its option is built once for its measured box, the ECharts modules of its chart kinds are fetched (shared by every
 * chart of the page) and one chart instance is created, which later data and sizes update (a theme change makes a new
 * one). A chart that answers clicks says so under it, shows a pointer, picks the nearest point of a line or area
 * wherever the plot is clicked, and is operable by keyboard: focus it, arrows move between points, Enter clicks.
 */
export function ChartWidget({ widget, columns, rows, formats }: ChartWidgetProps) {
  const dark = usePrefersDark();
  const base = widget.spec.display.echarts?.option;
  const mappings = widget.spec.data?.mappings;
  const kind = chartType(base ?? {}, mappings);
  const pointClicked = useContext(ChartClickContext);
  const clickable = pointClicked !== null && widget.spec.on_click !== undefined && kind !== "radar";
  const { ref, box, measureText } = useChartBox<HTMLDivElement>();
  const seen = useSeen(ref);
  // Built for the measured box only: a size-free option would be replaced as soon as the box is known.
  const option = useMemo(() => {
    if (!seen || !box) return null;
    const built = buildEchartsOption(base, mappings, { columns, rows }, { box, measureText, formats });
    // A pointer only over what answers a click (ECharts shows one over every series item by default).
    const series = (built.series as Record<string, unknown>[]).map((s) => ({ cursor: clickable ? "pointer" : "default", ...s }));
    // Transparent so the card's surface (light or dark) shows through. No animation unless the manifest's option
    // asks for it: ECharts redraws the whole canvas on every frame while it animates (a second after each update by
    // default), which kept the main thread busy for as long after every filter change (docs/dashboards-viewer.md).
    return { backgroundColor: "transparent", animation: false, ...built, series };
  }, [seen, base, mappings, columns, rows, box, measureText, formats, clickable]);
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
  // The last option whose chart kinds are registered: what the chart draws while the next kinds load (state adjusted
  // during render, React's pattern for a value derived from earlier renders).
  const [drawn, setDrawn] = useState<Record<string, unknown> | null>(null);
  if (loaded !== null && loaded.kinds === kinds && option && option !== drawn) setDrawn(option);

  const fire = useCallback((click: ChartClick) => pointClicked?.(widget, click, { columns, rows } satisfies ChartData), [pointClicked, widget, columns, rows]);
  // Lines and areas answer a click anywhere on the plot with the nearest point, so their series' own clicks (on the
  // ~8 px symbols) are not bound as well: one click, one event.
  const nearest = kind === "line";
  const onEvents = useMemo((): Record<string, (params: ChartClick) => void> => (clickable && !nearest ? { click: (params) => fire(params) } : {}), [clickable, nearest, fire]);
  const chart = useRef<ECharts | null>(null);
  // What the plot's click handler, bound once per instance, reads when it runs.
  const latest = useRef({ drawn, fire, plotClicks: clickable && nearest });
  useEffect(() => {
    latest.current = { drawn, fire, plotClicks: clickable && nearest };
  }, [drawn, fire, clickable, nearest]);
  const onChartReady = useCallback((instance: ECharts) => {
    chart.current = instance;
    instance.getZr().on("click", (event) => {
      const { drawn: current, fire: clicked, plotClicks } = latest.current;
      const at: [number, number] = [event.offsetX, event.offsetY];
      if (!plotClicks || !current || !instance.containPixel("grid", at)) return;
      const [index, value] = instance.convertFromPixel({ gridIndex: 0 }, at) as number[];
      const click = nearestPoint(current, Math.round(index), value);
      if (click) clicked(click);
    });
  }, []);

  // The keyboard's place among the points: [series, point], and what is read out for it.
  const points = useMemo(() => (drawn && clickable ? chartPoints(drawn) : []), [drawn, clickable]);
  const [cursor, setCursor] = useState<[number, number] | null>(null);
  const hintId = useId();
  const current = cursor ? points[cursor[0]]?.[cursor[1]] : undefined;
  const move = (next: [number, number]) => {
    const point = points[next[0]]?.[next[1]];
    const instance = chart.current;
    if (!point) return;
    setCursor(next);
    if (instance && point.seriesIndex !== undefined) {
      instance.dispatchAction({ type: "downplay" });
      instance.dispatchAction({ type: "highlight", seriesIndex: point.seriesIndex, dataIndex: point.dataIndex });
      instance.dispatchAction({ type: "showTip", seriesIndex: point.seriesIndex, dataIndex: point.dataIndex });
    }
  };
  const onKeyDown = (event: React.KeyboardEvent) => {
    const withPoints = points.map((p, i) => [i, p.length] as const).filter(([, n]) => n > 0);
    if (withPoints.length === 0) return;
    const [s, p] = cursor ?? [withPoints[0][0], -1];
    const at = withPoints.findIndex(([i]) => i === s);
    const length = points[s]?.length ?? 0;
    if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
      const step = event.key === "ArrowRight" ? 1 : -1;
      move([s, cursor ? Math.min(length - 1, Math.max(0, p + step)) : 0]);
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      const other = withPoints[Math.min(withPoints.length - 1, Math.max(0, at + (event.key === "ArrowDown" ? 1 : -1)))][0];
      move([other, Math.min(Math.max(p, 0), points[other].length - 1)]);
    } else if (event.key === "Home" || event.key === "End") {
      move([s, event.key === "Home" ? 0 : length - 1]);
    } else if ((event.key === "Enter" || event.key === " ") && current) {
      fire(current);
    } else {
      return;
    }
    event.preventDefault();
  };
  const onBlur = () => {
    chart.current?.dispatchAction({ type: "downplay" });
    chart.current?.dispatchAction({ type: "hideTip" });
  };

  if (failure) {
    return (
      <div className={styles.errorState} role="alert">
        <strong>The chart could not start.</strong>
        <span>{failure}</span>
      </div>
    );
  }
  const label = `${widget.metadata.name}: ${kind} chart`;
  const core = loaded?.core ?? null;
  const canvas = core && drawn ? (
    <core.ReactECharts echarts={core} option={drawn} notMerge theme={dark ? "dark" : undefined} opts={{ renderer: "canvas" }} onEvents={onEvents} onChartReady={onChartReady} className={styles.chartCanvas} style={{ height: "100%" }} />
  ) : (
    <div className={styles.chartCanvas} />
  );
  if (!clickable) {
    return (
      <div ref={ref} className={styles.chart} role="img" aria-label={label}>
        {canvas}
      </div>
    );
  }
  return (
    <div className={styles.chartClickable}>
      <div
        ref={ref}
        className={`${styles.chart} ${nearest ? styles.chartPointer : ""}`}
        role="application"
        aria-roledescription="chart"
        aria-label={label}
        aria-describedby={hintId}
        tabIndex={0}
        onKeyDown={onKeyDown}
        onBlur={onBlur}
        data-chart-point={current ? describePoint(current) : undefined}
      >
        {canvas}
      </div>
      <p id={hintId} className={styles.chartHint}>
        {clickHint(widget)}
        <span className={styles.srOnly}>. Arrow keys move between points, Enter clicks the point.</span>
      </p>
      <span className={styles.srOnly} aria-live="polite">
        {current ? describePoint(current) : ""}
      </span>
    </div>
  );
}
