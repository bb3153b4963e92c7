import type { WidgetResult } from "@/lib/dashboards/contract";
import { isIdColumn, toNumber } from "@/lib/dashboards/format";
import type { WidgetManifest } from "@/lib/manifest/schema";

/**
 * What an alert on a widget may watch, from what it shows now: numeric columns are metrics (a chart's series, a
 * table's measures; identifiers are not), the others dimensions an alert may be split by. A chart's mapped series
 * (`mappings.y`/`value`) come first, so the dialog proposes the series drawn.
 */
export function alertColumns(widget: WidgetManifest, result: WidgetResult | undefined): { metrics: string[]; dimensions: string[] } {
  const columns = result?.columns ?? [];
  const rows = result?.rows ?? [];
  const numeric = (c: string) => !isIdColumn(c) && rows.some((r) => toNumber(r[c]) !== null) && rows.every((r) => r[c] === null || r[c] === undefined || toNumber(r[c]) !== null);
  const mappings = widget.spec.data?.mappings ?? {};
  const mapped = [mappings.y, mappings.value].flatMap((m) => (m === undefined ? [] : Array.isArray(m) ? m : [m]));
  const metrics = columns.filter(numeric);
  return {
    metrics: [...mapped.filter((m) => metrics.includes(m)), ...metrics.filter((m) => !mapped.includes(m))],
    dimensions: columns.filter((c) => !metrics.includes(c)),
  };
}
