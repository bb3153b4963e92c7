"use client";

import { useEffect, useRef, useState } from "react";
import type { ChartContext } from "@/lib/dashboards/chart-option";

/** Box sizes are rounded to this many pixels, so a resize rebuilds the option only when the layout could change. */
const STEP = 8;

let canvas: CanvasRenderingContext2D | null | undefined;

/** The width of `text` in ECharts' default label font (12 px sans-serif), measured on a canvas as ECharts itself measures. */
function measureText(text: string): number {
  if (canvas === undefined) {
    canvas = document.createElement("canvas").getContext("2d");
    if (canvas) canvas.font = "12px sans-serif";
  }
  return canvas ? canvas.measureText(text).width : text.length * 7;
}

/**
 * The chart's box as the option builder lays labels out for it (lib/dashboards/chart-option.ts):
 * its element's size, followed with a ResizeObserver, and the browser's text measurement. Until
 * the element has been measured the box is unknown and the builder keeps its size-free defaults.
 */
export function useChartBox<E extends HTMLElement>(): { ref: React.RefObject<E | null>; box: ChartContext["box"]; measureText: ChartContext["measureText"] } {
  const ref = useRef<E>(null);
  const [box, setBox] = useState<ChartContext["box"]>(undefined);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    const update = () => {
      const width = Math.round(element.clientWidth / STEP) * STEP;
      const height = Math.round(element.clientHeight / STEP) * STEP;
      if (width === 0 || height === 0) return;
      setBox((previous) => (previous && previous.width === width && previous.height === height ? previous : { width, height }));
    };
    update();
    const observer = new ResizeObserver(update);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  return { ref, box, measureText: box ? measureText : undefined };
}
