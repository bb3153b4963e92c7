import { type ParsedDashboard, parseDashboardYaml } from "@/lib/manifest/parse";

/** A dashboard of one `sql` table widget, id `w`, running `query`: user SQL through the real engine (fault tests, benches). */
export function sqlWidgetDashboard(query: string): ParsedDashboard {
  const parsed = parseDashboardYaml(`version: "1.0"
kind: dashboard
metadata: { id: sql-widget, name: SQL widget }
spec:
  tabs: [{ id: t, name: T, widgets: [w] }]
---
version: "1.0"
kind: widget
metadata: { id: w, name: W }
spec:
  component: table
  layout: { x: 0, y: 0, w: 1, h: 1 }
  data:
    kind: sql
    query: ${JSON.stringify(query)}
`);
  if (!parsed.ok) throw new Error(parsed.errors.map((e) => e.message).join("; "));
  return parsed.dashboard;
}
