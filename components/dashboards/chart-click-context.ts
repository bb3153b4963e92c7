"use client";

import { createContext } from "react";
import type { ChartData } from "@/lib/dashboards/chart-option";
import type { ChartClick } from "@/lib/dashboards/chart-clicks";
import type { WidgetManifest } from "@/lib/manifest/schema";

/**
 * The dashboard view's handler of a click on a chart's data point (issue 27 §2). Provided by the
 * view, read by the charts that declare `on_click`: a chart outside a dashboard view (or in a
 * view without a click context) draws no click behaviour.
 */
export type PointClickHandler = (widget: WidgetManifest, click: ChartClick, data: ChartData) => void;

export const ChartClickContext = createContext<PointClickHandler | null>(null);
