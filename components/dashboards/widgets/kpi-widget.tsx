"use client";

import type { WidgetManifest } from "@/lib/manifest/schema";
import { formatKpiValue, kpiDelta, toNumber } from "@/lib/dashboards/format";
import styles from "./widgets.module.css";

interface KpiWidgetProps {
  widget: WidgetManifest;
  columns: string[];
  rows: Record<string, unknown>[];
}

const ARROWS = { up: "▲", down: "▼", flat: "■" } as const;

/** One figure from the first row (`mappings.value`, else `value`, else the first numeric column), with an optional delta against another column. */
export function KpiWidget({ widget, columns, rows }: KpiWidgetProps) {
  const display = widget.spec.display.kpi;
  const row = rows[0] ?? {};
  const mapped = widget.spec.data?.mappings?.value;
  const column = (Array.isArray(mapped) ? mapped[0] : mapped) ?? (columns.includes("value") ? "value" : columns.find((c) => toNumber(row[c]) !== null));
  const value = column ? toNumber(row[column]) : null;
  const comparison = display?.delta ? toNumber(row[display.delta.column]) : null;
  const delta = kpiDelta(value, comparison, display);
  return (
    <div className={styles.kpi}>
      <output className={styles.kpiValue} data-value={value ?? ""}>
        {value === null ? "–" : formatKpiValue(value, display)}
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
              ({formatKpiValue(comparison, display)})
            </span>
          )}
        </p>
      )}
    </div>
  );
}
