import type { Dataset, WidgetManifest } from "@/lib/manifest/schema";
import type { ValueFormat } from "@/lib/manifest/value-format";
import { KPI_CATALOG } from "@/lib/query/kpi-catalog";

/** Column id → its declared format, for the columns of one widget that declare one. */
export type ColumnFormats = Readonly<Record<string, ValueFormat>>;

const NONE: ColumnFormats = {};

/**
 * The formats a widget's columns declare where they are defined: the dimensions and metrics of its
 * dataset (with a catalog KPI's metrics for a `kpi:` dataset) or of its catalog KPI; SQL, static and
 * demo data declare theirs beside the data (`data.formats`). Undeclared columns fall back to the
 * widget's own display options.
 */
export function widgetColumnFormats(datasets: readonly Dataset[], widget: WidgetManifest): ColumnFormats {
  const data = widget.spec.data;
  const fields: { id: string; format?: ValueFormat }[] = [];
  if (data?.kind === "kpi") {
    const kpi = KPI_CATALOG.get(data.kpi ?? "");
    if (kpi) fields.push(...kpi.dataset.dimensions, ...kpi.dataset.metrics);
  } else if (data?.kind === "dataset") {
    const dataset = datasets.find((d) => d.id === data.dataset);
    const kpi = dataset?.kpi !== undefined ? KPI_CATALOG.get(dataset.kpi) : undefined;
    if (kpi) fields.push(...kpi.dataset.dimensions, ...kpi.dataset.metrics);
    if (dataset) fields.push(...dataset.dimensions, ...dataset.metrics);
  } else if (data?.formats !== undefined) {
    fields.push(...Object.entries(data.formats).map(([id, format]) => ({ id, format })));
  }
  const formats: Record<string, ValueFormat> = {};
  // The dataset's own declarations come last, so they win over a catalog KPI's.
  for (const field of fields) if (field.format !== undefined) formats[field.id] = field.format;
  return Object.keys(formats).length === 0 ? NONE : formats;
}
