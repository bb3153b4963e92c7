import "server-only";
import { withOwnTables } from "@/lib/db/own-tables";
import { toJsonValue } from "@/lib/json";
import type { Principal } from "@/lib/access/roles";
import { DomainError, NotFound, Unavailable, type ValidationItem } from "@/lib/errors";
import type { ClickContext } from "@/lib/manifest-check/interactions";
import type { DashboardRecord, DashboardRollups, WidgetResults } from "./contract";
import { rollupsOfGranted } from "./dashboard-rollups";
import { clickContext } from "./interactions";
import { grantForPrincipal, isEditor, type GrantedDashboard } from "./policy";
import { audienceOf, grantedLocale, queryGranted } from "./query";
import { findDashboardOr404, publishedVersionOf, toRecord } from "./dashboard-record";
import { withTenant } from "@/lib/db/tenant";
import type { OrgLocale } from "./format";
import { filtersFromParams, firstQueryWidgetIds, orgView, type ViewManifest } from "./wiring";

export type SearchParams = Record<string, string | string[] | undefined>;

export interface LoadedDashboard {
  record: DashboardRecord;
  view: ViewManifest;
  /** What is shown: a published version number, or the draft (editors). */
  version: number | "draft";
  filters: Record<string, unknown>;
  results: WidgetResults;
  timeZone: string;
  /** What its charts' clicks may do for this viewer. */
  clicks: ClickContext;
  /** The draft's rollups for the editor's table (`includeRollups`); null when not asked for, or the engine was busy (the editor reads them itself). */
  rollups: DashboardRollups | null;
}

/**
 * A dashboard whose stored manifest (the draft or the published version shown) no longer passes
 * validation: the rules were tightened after it was saved. Nothing of it is queried or rendered.
 */
export interface UnpassableDashboard {
  ok: false;
  dashboard: { id: string; slug: string; name: string };
  /** The record as the caller sees it (an editor's, to fix the draft); null for a viewer whose published version no longer parses. */
  record: DashboardRecord | null;
  version: number | "draft";
  /** Its problems with line and column, for editors; null for viewers, since the messages name the SQL's functions and tables. */
  errors: ValidationItem[] | null;
  /** The organization's, for an editor that previews the fixed manifest. */
  timeZone: string;
}

export type DashboardPage = ({ ok: true } & LoadedDashboard) | UnpassableDashboard;

/**
 * A dashboard page's data in one server pass: the record, the manifest of the version the access
 * policy grants (the published one; the draft when an editor asks or nothing is published yet)
 * and the first query for the widgets on screen under the URL's filters. The policy is asked once:
 * the query runs on that grant (queryGranted), and the organization's time zone is read once.
 * Not found and not allowed are both null, so a viewer cannot tell a hidden dashboard from a
 * missing one. A stored manifest that no longer validates is not an exception: it comes back as an
 * UnpassableDashboard (its errors for editors only), so the viewer says why and the editor still
 * opens to fix it. `includeYaml` puts the draft's YAML in an editor's record (the editor page).
 */
export async function loadDashboard(principal: Principal, slug: string, params: SearchParams, options: { includeYaml?: boolean; includeRollups?: boolean } = {}): Promise<DashboardPage | null> {
  let granted: GrantedDashboard;
  let record: DashboardRecord | null;
  let locale: OrgLocale;
  try {
    // A viewer's ?version=draft shows the published version, as if the parameter were absent.
    granted = await grantForPrincipal(principal, slug, params.version === "draft" && isEditor(principal) ? "draft" : "published");
    [record, locale] = await Promise.all([
      withOwnTables(principal.orgId, () =>
        withTenant(principal, async (tx) => {
          const row = await findDashboardOr404(tx, granted.dashboardId);
          return toRecord(principal, row, await publishedVersionOf(tx, row), { includeYaml: options.includeYaml ?? false });
        }),
      ),
      grantedLocale(granted),
    ]);
  } catch (error) {
    if (error instanceof NotFound) return null;
    throw error;
  }
  const { timeZone } = locale;
  // The policy granted it by the roles its YAML lists; nothing is queried for a manifest that does not parse.
  if (!granted.parsed.ok) {
    return {
      ok: false,
      dashboard: { id: granted.dashboardId, slug: granted.slug, name: granted.name },
      record,
      version: granted.version,
      errors: isEditor(principal) ? granted.parsed.errors : null,
      timeZone,
    };
  }
  if (!record) return null;
  const view = orgView(granted.parsed.value, locale.currency);
  const filters = filtersFromParams(view, params);
  const visible = firstQueryWidgetIds(view, params);
  // A busy engine (no slot or connection in time, Retry-After) fails no page: it renders without
  // data, and the viewer asks for the widgets (and the editor for its rollups) itself, retrying with back-off and saying so.
  const whenBusy = <T>(fallback: T) => (error: unknown) => {
    if (error instanceof Unavailable && error.retryAfterSeconds !== undefined) return fallback;
    throw error;
  };
  const wantsRollups = options.includeRollups === true && granted.version === "draft" && isEditor(principal);
  const [answer, clicks, rollups] = await Promise.all([
    queryGranted(granted, audienceOf(principal), filters, visible, { timeZone }).catch(whenBusy({ widgets: {} })),
    clickContext(granted.parsed.value, granted.slug, (target) => openable(principal, target)),
    wantsRollups ? rollupsOfGranted(principal, granted, granted.parsed.value, timeZone).catch(whenBusy(null)) : null,
  ]);
  return {
    ok: true,
    record,
    view: toJsonValue(view) as ViewManifest,
    version: granted.version,
    filters,
    results: toJsonValue(answer.widgets) as WidgetResults,
    timeZone,
    clicks,
    rollups,
  };
}

/** Another dashboard's published manifest when `principal` may open it, for a drill-through; null when not (missing and hidden alike). */
async function openable(principal: Principal, slug: string) {
  try {
    const granted = await grantForPrincipal(principal, slug, "published");
    return granted.parsed.ok ? granted.parsed.value : null;
  } catch (error) {
    if (error instanceof DomainError) return null;
    throw error;
  }
}
