import "server-only";
import { toJsonValue } from "@/lib/api/json";
import { ApiError, notFound } from "@/lib/api/errors";
import { findOrganization } from "@/lib/auth/directory";
import type { Principal } from "@/lib/auth/roles";
import type { DashboardRecord, WidgetResults } from "./contract";
import { parseManifestCached } from "./manifest";
import { queryDashboard } from "./query";
import { findDashboardOr404, isEditor, publishedVersionOf, toRecord, viewerMayOpen } from "./records";
import { withTenant } from "@/lib/db/tenant";
import { dataWidgetIds, filtersFromParams, pageRegions, tabFromParams, visibleWidgetIds, type ViewManifest } from "./wiring";

export type SearchParams = Record<string, string | string[] | undefined>;

export interface LoadedDashboard {
  record: DashboardRecord;
  view: ViewManifest;
  /** What is shown: a published version number, or the draft (editors). */
  version: number | "draft";
  filters: Record<string, unknown>;
  results: WidgetResults;
  timeZone: string;
}

/**
 * A dashboard page's data in one server pass: the record, the manifest of the version shown
 * (the published one; the draft when an editor asks or nothing is published yet) and the first
 * query for the widgets on screen under the URL's filters. Not found and not allowed are both
 * null, so a viewer cannot tell a hidden dashboard from a missing one.
 */
export async function loadDashboard(principal: Principal, slug: string, params: SearchParams): Promise<LoadedDashboard | null> {
  const wantDraft = params.version === "draft";
  let shown: { record: DashboardRecord; yaml: string; version: number | "draft" };
  try {
    shown = await withTenant(principal, async (tx) => {
      const row = await findDashboardOr404(tx, slug);
      const published = await publishedVersionOf(tx, row);
      const record = toRecord(principal, row, published, { includeYaml: false });
      if (!record) throw notFound("Dashboard");
      if (isEditor(principal) && (wantDraft || !published)) return { record, yaml: row.draftYaml, version: "draft" as const };
      if (!published) throw notFound("Dashboard");
      return { record, yaml: published.specYaml, version: published.version };
    });
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
  const parsed = parseManifestCached(shown.yaml);
  // Stored manifests were validated on save; one that no longer parses is a server fault, not the viewer's.
  if (!parsed.ok) throw new Error(`stored manifest of ${shown.record.id} does not validate`);
  if (!viewerMayOpen(principal, parsed.value)) return null;
  const view: ViewManifest = { manifest: parsed.value.manifest, widgets: parsed.value.widgets };
  const filters = filtersFromParams(view, params);
  const visible = dataWidgetIds(view, visibleWidgetIds(pageRegions(view, tabFromParams(params))));
  const [answer, org] = await Promise.all([
    queryDashboard(principal, shown.record.id, { filters, widget_ids: visible, version: shown.version === "draft" ? "draft" : shown.version }),
    findOrganization(principal.orgId),
  ]);
  return {
    record: shown.record,
    view: toJsonValue(view) as ViewManifest,
    version: shown.version,
    filters,
    results: toJsonValue(answer.widgets) as WidgetResults,
    timeZone: org?.timeZone ?? "UTC",
  };
}
