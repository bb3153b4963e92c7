import "server-only";
import type { Principal } from "@/lib/access/roles";
import { Invalid } from "@/lib/errors";
import { dashboardRollups } from "@/lib/query/rollup-definition";
import type { BuiltRollup } from "@/lib/query/rollup-routing";
import { planWidget, plannedSource } from "@/lib/query/run";
import { answersScope, rollupId, rollupStates } from "@/lib/rollups/registry";
import type { ParsedDashboard } from "@/lib/manifest/schema";
import type { DashboardRollup, DashboardRollups } from "./contract";
import { grantForPrincipal, type GrantedDashboard } from "./policy";
import { grantedTimeZone } from "./query";
import { isDataWidget } from "./wiring";

/**
 * A build reads every location of the organization, so its database error can quote a value from any of
 * them (an editor can write a measure whose cast fails on another location's row): an editor limited to
 * some locations is told that it failed, not the database's words.
 */
export const SCOPED_FAILURE = "its last build failed; editors who see every location are shown the database's reason";

/**
 * What the manifest editor shows of a draft's rollups (issue 31 §2, docs/rollups.md): each one's build
 * state and the widgets it answers under the default filter values. Which rollup answers a widget is
 * decided by the query engine's own planning (plannedSource: the selection and routing runWidgetQuery
 * uses) over the rollups that are built and fresh, exactly as a query of the draft would, so this list
 * cannot say a rollup serves a widget the query then reads from the tables, or the other way round.
 */
export async function getDashboardRollups(principal: Principal, idOrSlug: string) {
  const granted = await grantForPrincipal(principal, idOrSlug, "draft");
  if (!granted.parsed.ok) throw new Invalid(granted.parsed.errors);
  return rollupsOfGranted(principal, granted, granted.parsed.value, await grantedTimeZone(granted));
}

/**
 * The same for a draft the caller already holds the grant of (the editor page's loader, which granted
 * once to render the page: its first paint shows the table without asking the policy again).
 */
export async function rollupsOfGranted(principal: Principal, granted: GrantedDashboard, manifest: ParsedDashboard, timeZone: string): Promise<DashboardRollups> {
  const declared = [...manifest.datasets.values()].flatMap((dataset) => dashboardRollups([dataset]).map((definition) => ({ dataset: dataset.id, definition, id: rollupId(definition) })));
  const states = await rollupStates(granted.scope.orgId, declared.map((d) => d.definition), timeZone);
  const fresh = [...states.values()].flatMap((s): BuiltRollup[] => (s.state === "ready" && answersScope(s.rollup, granted.scope) ? [s.rollup] : []));

  const now = new Date();
  const served = new Map<string, { id: string; title: string }[]>();
  const base: { id: string; title: string }[] = [];
  for (const widget of manifest.widgets.filter(isDataWidget)) {
    const planned = plannedSource(planWidget({ scope: granted.scope, viewer: granted.viewer, dashboard: manifest, widgetId: widget.metadata.id, filterValues: {}, now, timeZone, rollups: fresh }));
    const entry = { id: widget.metadata.id, title: widget.metadata.name };
    if (planned?.kind === "rollup") served.set(planned.rollup.id, [...(served.get(planned.rollup.id) ?? []), entry]);
    else if (planned?.kind === "base") base.push(entry);
  }

  const rollups = declared.map(({ dataset, definition, id }): DashboardRollup => {
    const state = states.get(id)!;
    return {
      name: definition.name,
      dataset,
      state: state.state,
      error: state.state === "failed" ? (principal.locationIds === null ? state.error : SCOPED_FAILURE) : null,
      widgets: served.get(id) ?? [],
    };
  });
  return { dashboard_id: granted.dashboardId, version: "draft", rollups, base_widgets: base };
}
