"use client";

import type { WidgetManifest } from "@/lib/manifest/schema";
import type { ColumnFormats } from "@/lib/dashboards/column-formats";
import { kpiFigure } from "@/lib/dashboards/widget-figures";
import styles from "./widgets.module.css";

interface KpiWidgetProps {
  widget: WidgetManifest;
  columns: string[];
  rows: Record<string, unknown>[];
  /** The declared formats of the widget's columns: the figure's column format wins over `display.kpi`. */
  formats: ColumnFormats;
}

const ARROWS = { up: "▲", down: "▼", flat: "■" } as const;

/** A KPI tile: the figure and its delta as `kpiFigure` words them (the reports print the same text). */
export function KpiWidget({ widget, columns, rows, formats }: KpiWidgetProps) {
  const { value, text, delta, comparison } = kpiFigure(widget, columns, rows, formats);
  return (
    <div className={styles.kpi}>
      <output className={styles.kpiValue} data-value={value ?? ""}>
        {text}
      </output>
      {delta && (
        <p className={`${styles.kpiDelta} ${styles[delta.tone]}`}>
          <span aria-hidden="true">{ARROWS[delta.direction]}</span>
          <span>
            {delta.text}
            {delta.label ? ` ${delta.label}` : ""}
          </span>
          {comparison !== null && <span className={styles.kpiComparison}>({comparison})</span>}
        </p>
      )}
    </div>
  );
}
