import type { Dataset, WidgetManifest } from "@/lib/manifest/schema";
import { type ValueFormat, resolveFormat } from "@/lib/manifest/value-format";
import { KPI_CATALOG } from "@/lib/query/kpi-catalog";

/** Column id → its declared format, for the columns of one widget that declare one. */
export type ColumnFormats = Readonly<Record<string, ValueFormat>>;

const NONE: ColumnFormats = {};

/**
 * The formats a widget's columns declare where they are defined: the dimensions and metrics of its
 * dataset (with a catalog KPI's metrics for a `kpi:` dataset) or of its catalog KPI; SQL, static and
 * demo data declare theirs beside the data (`data.formats`). Undeclared columns fall back to the
 * widget's own display options. With `currency` (the organization's), a `currency` format that names no code
 * reads in it.
 */
export function widgetColumnFormats(datasets: readonly Dataset[], widget: WidgetManifest, currency?: string): ColumnFormats {
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
  for (const field of fields) if (field.format !== undefined) formats[field.id] = currency === undefined ? field.format : inCurrency(field.format, currency);
  return Object.keys(formats).length === 0 ? NONE : formats;
}

/** A `currency` format that names no code, in `currency`; any other format as declared. */
export function inCurrency(format: ValueFormat, currency: string): ValueFormat {
  const resolved = resolveFormat(format);
  return resolved.type === "currency" && resolved.currency === undefined ? { ...resolved, currency } : format;
}
