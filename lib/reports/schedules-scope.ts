import "server-only";
import type { Principal, Role } from "@/lib/access/roles";

/**
 * Whose data a scheduled report shows: a role (which dashboards and widgets it may see) and a set of
 * locations (empty: every location). Recipients with the same scope get the same file, so a run
 * renders once per distinct scope, never once per recipient.
 */
export interface ReportScope {
  role: Role;
  /** Sorted and distinct; empty: every location. */
  locationIds: string[];
}

export function reportScope(role: Role, locationIds: readonly string[] | null | undefined): ReportScope {
  return { role, locationIds: [...new Set(locationIds ?? [])].sort() };
}

/** The scope's name in rows (report_files.scope_key, notification_deliveries.report_scope) and signed links. */
export function scopeKey(scope: ReportScope): string {
  return `${scope.role}:${scope.locationIds.length > 0 ? scope.locationIds.join(",") : "*"}`;
}

export function parseScopeKey(key: string): ReportScope | null {
  const [role, locations] = key.split(":");
  if ((role !== "admin" && role !== "general_manager" && role !== "analyst") || locations === undefined) return null;
  return reportScope(role, locations === "*" ? [] : locations.split(","));
}

/** Whether `inner` shows nothing `outer` does not: the same or a narrower set of locations. */
export function withinLocations(inner: readonly string[], outer: readonly string[] | null): boolean {
  if (outer === null || outer.length === 0) return true;
  return inner.length > 0 && inner.every((id) => outer.includes(id));
}

/**
 * The principal a scope is rendered as: the renderer applies the same access policy and row-level
 * security as the viewer's query for it. `userId` names who the render is for in logs; the data
 * depends only on role and locations.
 */
export function scopePrincipal(org: { id: string; slug: string; name: string }, userId: string, scope: ReportScope): Principal {
  return { userId, orgId: org.id, orgSlug: org.slug, orgName: org.name, role: scope.role, locationIds: scope.locationIds.length > 0 ? [...scope.locationIds] : null, via: "session" };
}
