import { FilterValueError, toPredicate } from "@/lib/query/filters";
import type { FilterOperator } from "@/lib/manifest/schema";
import type { ManifestPath } from "@/lib/manifest/source";
import type { PlacedWidget } from "./references";

/** Controls whose value is a date expression (lib/query/dates.ts). */
const DATE_CONTROLS: ReadonlySet<string> = new Set(["date", "date_range", "calendar"]);

type Report = (document: number, path: ManifestPath, message: string) => void;

/**
 * A filter's `display.filter.default` is a value like any other, so it is validated the way the
 * engine reads values (toPredicate in lib/query/filters.ts, which reads date expressions with
 * resolveDateExpression in lib/query/dates.ts): for a date control it must be a date expression,
 * and it must suit every operator that reads it (the filter's own bindings and the `filters`
 * entries naming it). Otherwise a manifest that validates would fail in every widget the filter
 * drives ("default: next fortnight"). One error per default, at the default's line and column.
 * `now` only matters for expressions whose reading depends on the day; none of the accepted forms
 * becomes unreadable on another day.
 */
export function checkFilterDefaults(widgets: readonly PlacedWidget[], report: Report, now: Date = new Date()): void {
  for (const { manifest, document, path } of widgets) {
    const display = manifest.spec.display.filter;
    const value = display?.default;
    if (manifest.spec.component !== "filter" || !display || value === undefined || value === null || value === "" || (Array.isArray(value) && value.length === 0)) continue;
    const source = manifest.metadata.id;
    const uses: [FilterOperator, string][] = [];
    if (DATE_CONTROLS.has(display.control)) uses.push(["date", "(date control)"]);
    for (const binding of manifest.spec.bindings) uses.push([binding.operator, binding.field]);
    for (const other of widgets) {
      for (const use of other.manifest.spec.filters) if (use.filter_id === source) uses.push([use.operator, use.field]);
    }
    for (const [operator, field] of uses) {
      try {
        toPredicate({ source, field, operator, value, required: true }, { now, timeZone: "UTC" });
      } catch (error) {
        if (!(error instanceof FilterValueError)) throw error;
        report(document, [...path, "spec", "display", "filter", "default"], `this default cannot be applied: ${error.reason}`);
        break;
      }
    }
  }
}
