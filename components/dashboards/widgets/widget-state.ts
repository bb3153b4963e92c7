import type { WidgetManifest } from "@/lib/manifest/schema";

/** What a widget card shows: a skeleton, the error box, the field-policy notice, the empty state, or its component. */
export type WidgetState = "skeleton" | "error" | "restricted" | "empty" | "ready";

/** The part of a query result the state depends on. */
export interface ResultShape {
  rows: unknown[];
  error: { detail: string } | null;
  /** The widget needs a field the viewer may not see (dataset field policies): a notice, not a failure. */
  restricted?: string;
}

/** Components that render from the manifest alone; the query endpoint returns nothing for them. */
const STATIC_COMPONENTS = new Set(["text", "image", "markdown"]);

/**
 * Static components are always ready; a filter without a data source (static options, dates)
 * never waits for data and a filter is never "empty" (its control stays usable). Everything
 * else waits for its first result, then shows its error, the empty state (no rows, e.g. when
 * its data lacks a filtered field, SPEC §2.5 rule 4) or itself.
 */
export function widgetState(widget: WidgetManifest, result: ResultShape | undefined): WidgetState {
  const component = widget.spec.component;
  if (STATIC_COMPONENTS.has(component)) return "ready";
  if (component === "filter" && widget.spec.data === undefined) return "ready";
  if (result === undefined) return "skeleton";
  if (result.error) return "error";
  if (result.restricted !== undefined) return "restricted";
  if (component !== "filter" && result.rows.length === 0) return "empty";
  return "ready";
}
