import type { ColumnFormats } from "@/lib/dashboards/column-formats";
import { formatKpiValue, formatNumber, formatValue } from "@/lib/dashboards/format";
import type { WidgetManifest } from "@/lib/manifest/schema";
import { resolveFormat } from "@/lib/manifest/value-format";
import type { AlertCondition } from "./contract";

/*
 * Alerts in words, for messages (message.ts) and the alert pages alike: no server code here, so the browser's
 * pages read a condition exactly as a message states it.
 */

/**
 * A figure of the watched column as the dashboard shows it: a KPI tile's own figure (its declared format, prefix and
 * suffix), else the column's declared format, else a grouped number.
 */
export function figureFormat(widget: WidgetManifest, column: string, formats: ColumnFormats): (value: number) => string {
  const declared = formats[column];
  if (widget.spec.component === "kpi") return (value) => formatKpiValue(value, widget.spec.display.kpi, declared);
  if (declared !== undefined) return (value) => formatValue(value, resolveFormat(declared));
  return (value) => formatNumber(value);
}

/** The column an alert watches: the one it names, else the widget's mapped value, else `value` (what evaluation reads). */
export function watchedColumn(widget: WidgetManifest, column: string | undefined): string {
  const mapped = widget.spec.data?.mappings?.value;
  return column ?? (typeof mapped === "string" ? mapped : "value");
}

export const PERIOD_NAME = { day: "the previous day", week: "the previous week", month: "the previous month" } as const;

/** The condition in words, its thresholds formatted: "above $10,000.00", "a decrease of at least 10% against the previous week". */
export function conditionWords(condition: AlertCondition, figure: (value: number) => string = (value) => formatNumber(value)): string {
  switch (condition.kind) {
    case "above":
      return `above ${figure(condition.threshold)}`;
    case "below":
      return `below ${figure(condition.threshold)}`;
    case "outside":
      return `outside ${figure(condition.low)} – ${figure(condition.high)}`;
    case "change": {
      const amount = condition.measure === "percent" ? `${formatNumber(condition.amount, 1)}%` : figure(condition.amount);
      const what = condition.direction === "increase" ? "an increase" : condition.direction === "decrease" ? "a decrease" : "a change";
      return `${what} of at least ${amount} against ${PERIOD_NAME[condition.against]}`;
    }
    case "no_data":
      return "no data";
  }
}
