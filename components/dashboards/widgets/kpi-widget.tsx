"use client";

import type { WidgetManifest } from "@/lib/manifest/schema";
import type { ColumnFormats } from "@/lib/dashboards/column-formats";
import { formatKpiValue, kpiDelta, toNumber } from "@/lib/dashboards/format";
import styles from "./widgets.module.css";

interface KpiWidgetProps {
  widget: WidgetManifest;
  columns: string[];
  rows: Record<string, unknown>[];
  /** The declared formats of the widget's columns: the figure's column format wins over `display.kpi`. */
  formats: ColumnFormats;
}

const ARROWS = { up: "▲", down: "▼", flat: "■" } as const;

/**
 * One figure from the first row (`mappings.value`, else `value`, else the first numeric column), with
 * an optional delta against another column. The figure, its comparison and an absolute delta read in
 * the figure's column format when it declares one, so the tile matches every table of that metric.
 */
export function KpiWidget({ widget, columns, rows, formats }: KpiWidgetProps) {
  const display = widget.spec.display.kpi;
  const row = rows[0] ?? {};
  const mapped = widget.spec.data?.mappings?.value;
  const column = (Array.isArray(mapped) ? mapped[0] : mapped) ?? (columns.includes("value") ? "value" : columns.find((c) => toNumber(row[c]) !== null));
  const value = column ? toNumber(row[column]) : null;
  const comparison = display?.delta ? toNumber(row[display.delta.column]) : null;
  const declared = column ? formats[column] : undefined;
  const delta = kpiDelta(value, comparison, display, declared);
  return (
    <div className={styles.kpi}>
      <output className={styles.kpiValue} data-value={value ?? ""}>
        {value === null ? "–" : formatKpiValue(value, display, declared)}
      </output>
      {delta && (
        <p className={`${styles.kpiDelta} ${styles[delta.tone]}`}>
          <span aria-hidden="true">{ARROWS[delta.direction]}</span>
          <span>
            {delta.text}
            {delta.label ? ` ${delta.label}` : ""}
          </span>
          {comparison !== null && (
            <span className={styles.kpiComparison}>
              ({formatKpiValue(comparison, display, declared)})
            </span>
          )}
        </p>
      )}
    </div>
  );
}
