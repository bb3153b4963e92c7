import type { WidgetManifest } from "@/lib/manifest/schema";
import type { ColumnFormats } from "./column-formats";
import { columnFormatter, formatCell, formatKpiValue, kpiDelta, toNumber, type KpiDelta } from "./format";

/**
 * What a KPI tile and a table show, as text: one source for the viewer's widgets
 * (components/dashboards/widgets) and the server-rendered reports (lib/reports), so a figure in a
 * report reads exactly as on screen.
 */

export interface KpiFigure {
  /** The figure, null when there is none. */
  value: number | null;
  /** As shown ("–" without a figure). */
  text: string;
  delta: KpiDelta | null;
  /** The comparison figure as shown, when the tile has a comparison column and a figure in it. */
  comparison: string | null;
}

/**
 * One figure from the first row (`mappings.value`, else `value`, else the first numeric column), with
 * an optional delta against another column. The figure, its comparison and an absolute delta read in
 * the figure's column format when it declares one, so the tile matches every table of that metric.
 */
export function kpiFigure(widget: WidgetManifest, columns: string[], rows: Record<string, unknown>[], formats: ColumnFormats): KpiFigure {
  const display = widget.spec.display.kpi;
  const row = rows[0] ?? {};
  const mapped = widget.spec.data?.mappings?.value;
  const column = (Array.isArray(mapped) ? mapped[0] : mapped) ?? (columns.includes("value") ? "value" : columns.find((c) => toNumber(row[c]) !== null));
  const value = column ? toNumber(row[column]) : null;
  const comparison = display?.delta ? toNumber(row[display.delta.column]) : null;
  const declared = column ? formats[column] : undefined;
  return {
    value,
    text: value === null ? "–" : formatKpiValue(value, display, declared),
    delta: kpiDelta(value, comparison, display, declared),
    comparison: comparison === null ? null : formatKpiValue(comparison, display, declared),
  };
}

export interface TableCells {
  /** Column ids in order. */
  names: string[];
  /** Right-aligned: every non-empty cell is a number. */
  numeric: Set<string>;
  /** A cell as shown: a numeric column in its declared format, else with as many decimals as its values need. */
  cell(column: string, value: unknown): string;
}

export function tableCells(columns: string[], rows: Record<string, unknown>[], formats: ColumnFormats): TableCells {
  const names = columns.length > 0 ? columns : Object.keys(rows[0] ?? {});
  const numeric = new Set(names.filter((c) => rows.some((r) => r[c] !== null && r[c] !== undefined) && rows.every((r) => r[c] === null || r[c] === undefined || toNumber(r[c]) !== null)));
  const formatters = new Map<string, (value: unknown) => string>();
  return {
    names,
    numeric,
    cell(column, value) {
      if (!numeric.has(column)) return formatCell(value);
      let format = formatters.get(column);
      if (!format) formatters.set(column, (format = columnFormatter(column, rows.map((r) => r[column]), formats[column])));
      return format(value);
    },
  };
}
