import "server-only";
import { toJsonValue } from "@/lib/api/json";
import { ApiError, notFound } from "@/lib/api/errors";
import { findOrganization } from "@/lib/auth/directory";
import { verifyEmbedToken, type EmbedGrant } from "./embed";
import { parseManifestCached } from "./manifest";
import { queryEmbedded } from "./query";
import { withTenant } from "@/lib/db/tenant";
import type { WidgetResults } from "./contract";
import { dataWidgetIds, filtersFromParams, pageRegions, tabFromParams, visibleWidgetIds, type ViewManifest } from "./wiring";

export type EmbedPage =
  | { ok: true; grant: EmbedGrant; name: string; view: ViewManifest; filters: Record<string, unknown>; results: WidgetResults; timeZone: string }
  | { ok: false; status: number; reason: string };

/** An embed token's grant, the manifest of the version it is bound to and the first query; a bad token is a reason, not an exception. */
export async function loadEmbed(token: string, params: Record<string, string | string[] | undefined>): Promise<EmbedPage> {
  try {
    const grant = await verifyEmbedToken(token);
    const version = await withTenant({ orgId: grant.orgId }, (tx) =>
      tx.dashboardVersion.findUnique({ where: { dashboardId_version: { dashboardId: grant.dashboardId, version: grant.version } }, select: { specYaml: true, name: true } }),
    );
    if (!version) throw notFound("Dashboard");
    const parsed = parseManifestCached(version.specYaml);
    if (!parsed.ok) throw new Error(`published manifest of ${grant.dashboardId} does not validate`);
    const view: ViewManifest = { manifest: parsed.value.manifest, widgets: parsed.value.widgets };
    const filters = filtersFromParams(view, params);
    const visible = dataWidgetIds(view, visibleWidgetIds(pageRegions(view, tabFromParams(params))));
    const [answer, org] = await Promise.all([queryEmbedded(grant, filters, visible), findOrganization(grant.orgId)]);
    return {
      ok: true,
      grant,
      name: version.name,
      view: toJsonValue(view) as ViewManifest,
      filters,
      results: toJsonValue(answer.widgets) as WidgetResults,
      timeZone: org?.timeZone ?? "UTC",
    };
  } catch (error) {
    if (error instanceof ApiError) return { ok: false, status: error.status, reason: typeof error.detail === "string" ? error.detail : "This embed link is not valid" };
    throw error;
  }
}
