import { parseDashboardYaml } from "@/lib/manifest-check/parse";
import type { ParsedDashboard } from "@/lib/manifest/schema";
import type { SqlPolicy } from "@/lib/manifest-check/references";

/**
 * A dashboard of one `sql` table widget, id `w`, running `query`: user SQL through the real engine
 * (query tests, fault tests, benches). `filter` adds a select filter `pick` bound to `w`'s `channel`;
 * `widgetSpec` adds lines to `w`'s spec (two-space indented, e.g. `  filters: [...]`); `sqlPolicy` validates
 * its SQL as the server does (lib/dashboards/manifest.ts), else only the lexer checks it.
 */
export function sqlWidgetDashboard(query: string, options: { filter?: boolean; widgetSpec?: string; sqlPolicy?: SqlPolicy } = {}): ParsedDashboard {
  const filter = options.filter
    ? `---
version: "1.0"
kind: widget
metadata: { id: pick, name: Pick }
spec:
  component: filter
  layout: { x: 0, y: 0, w: 1, h: 1 }
  display: { filter: { control: select } }
  bindings: [{ target: w, field: channel, operator: eq }]
`
    : "";
  const parsed = parseDashboardYaml(`version: "1.0"
kind: dashboard
metadata: { id: sql-widget, name: SQL widget }
spec:
  tabs: [{ id: t, name: T, widgets: [${options.filter ? "w, pick" : "w"}] }]
${filter}---
version: "1.0"
kind: widget
metadata: { id: w, name: W }
spec:
  component: table
  layout: { x: 0, y: 0, w: 1, h: 1 }
  data:
    kind: sql
    query: ${JSON.stringify(query)}
${options.widgetSpec ?? ""}`, { sqlPolicy: options.sqlPolicy });
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => `${e.line}:${e.column} ${e.message}`).join("\n"));
  return parsed.dashboard;
}
