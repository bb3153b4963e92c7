import "server-only";
import type { Principal } from "@/lib/access/roles";
import { findOrganization } from "@/lib/auth/directory";
import { Invalid, Unavailable, forbidden, notFound } from "@/lib/errors";
import { invoke } from "@/lib/operation";
import type { EmbedGrant } from "@/lib/dashboards/policy";
import { queryDashboard } from "@/lib/dashboards/operations";
import { UNAVAILABLE_TO_ANONYMOUS, UNPASSABLE_TO_VIEWERS, grantForEmbed, grantForPrincipal, grantForPublic, isEditor, type GrantedDashboard } from "@/lib/dashboards/policy";
import { queryGranted } from "@/lib/dashboards/query";
import { QueueDeadline } from "@/lib/query/fair-queue";
import { drawPool } from "./draw/pool";
import { DEFAULT_REPORT_LIMITS, type ReportLimits, reportQueue } from "./limits";
import { type ModelRequest, type ReportSource, reportModel, scopeLine } from "./report-model";
import { type PageRequest, reportFilename, reportPage } from "./report-page";

/**
 * A dashboard as a PDF or PNG report, rendered on the server without a browser (issue 29), from its
 * three doors: a signed-in principal, an embed grant, a public link. Each builds the report's model
 * (report-model.ts: the granted version, its data through the same query service, result cache and
 * row-level security as the viewer, figures by the viewer's own functions), picks the paper
 * (report-page.ts) and hands both to a draw process with hard time and memory limits (draw/pool.ts),
 * which lays out, pages and writes it. docs/reports.md.
 */

export interface ReportRequest extends ModelRequest, PageRequest {
  /** The dashboard's id or slug. */
  dashboardId: string;
  /** "draft" for editors, as in the viewer; the published version otherwise. */
  version?: "published" | "draft";
}

export interface RenderedReport {
  bytes: Uint8Array;
  contentType: string;
  filename: string;
  pages: number;
  /** What the limits left out, in words (also printed in the report). */
  cut: string[];
}

const ROLE_NAMES: Record<Principal["role"], string> = { admin: "Admin", general_manager: "General manager", analyst: "Analyst" };

/** One organization's renders wait their turn (FairQueue); too long a wait is 503 with Retry-After. */
async function queued(orgId: string, work: () => Promise<RenderedReport>): Promise<RenderedReport> {
  try {
    return await reportQueue.get().run(orgId, work);
  } catch (error) {
    if (error instanceof QueueDeadline) throw new Unavailable("Too many reports are being rendered for this organization; try again shortly", 30);
    throw error;
  }
}

/**
 * Renders a report as `principal` sees the dashboard. Throws what `…/query` throws for the same
 * caller (404 hidden or missing, 422/503 for a manifest that no longer validates) and 503 with
 * Retry-After when the organization's render line is full for too long.
 */
export async function renderDashboardReport(principal: Principal, request: ReportRequest, limits: ReportLimits = DEFAULT_REPORT_LIMITS): Promise<RenderedReport> {
  return queued(principal.orgId, async () => {
    const wanted = request.version === "draft" && isEditor(principal) ? "draft" : "published";
    const granted = await grantForPrincipal(principal, request.dashboardId, wanted);
    const source: ReportSource = {
      granted,
      unpassable: () => (isEditor(principal) && !granted.parsed.ok ? new Invalid(granted.parsed.errors) : new Unavailable(UNPASSABLE_TO_VIEWERS)),
      locked: {},
      query: (filters, widgetIds, version) => invoke(queryDashboard, principal, { params: { id: granted.dashboardId }, body: { filters, widget_ids: widgetIds, version } }),
      scopeLine: () => scopeLine(ROLE_NAMES[principal.role], principal, principal.orgName),
    };
    return render(source, request, limits);
  });
}

/** Which downloads a manifest offers on pages without a sign-in (`platform.downloads`; none when it no longer validates). */
function offeredDownloads(granted: GrantedDashboard): { pdf: boolean; png: boolean } {
  return granted.parsed.ok ? granted.parsed.value.manifest.platform.downloads : { pdf: false, png: false };
}

function mustOffer(offered: { pdf: boolean; png: boolean }, format: "pdf" | "png") {
  if (!offered[format]) throw forbidden(`This dashboard does not offer ${format.toUpperCase()} downloads here: its manifest's platform.downloads.${format} is not true`);
}

/**
 * An embed's report: the version and location scope of its grant, its locked filters over the request's, read through
 * the embed's own query. Only a format the shown version's manifest offers (`platform.downloads`) and the dashboard's
 * current published manifest still offers (403 otherwise: turning downloads off and publishing stops every link's,
 * as `allow_embed` stops the links themselves).
 */
export async function renderEmbedReport(grant: EmbedGrant, request: Omit<ReportRequest, "dashboardId" | "version">, limits: ReportLimits = DEFAULT_REPORT_LIMITS): Promise<RenderedReport> {
  const granted = await grantForEmbed(grant);
  if (!granted.parsed.ok) throw new Unavailable(UNAVAILABLE_TO_ANONYMOUS);
  mustOffer(offeredDownloads(granted), request.format);
  mustOffer(grant.downloads, request.format);
  const org = await findOrganization(grant.orgId);
  return queued(grant.orgId, () =>
    render(
      {
        granted,
        unpassable: () => new Unavailable(UNAVAILABLE_TO_ANONYMOUS),
        locked: grant.lockedFilters,
        // The embed's own query on the grant already checked (filters arrive with its locks over them).
        query: (filters, widgetIds) => queryGranted(granted, "anonymous", filters, widgetIds),
        scopeLine: () => scopeLine("Embedded dashboard", granted.scope, org?.name ?? ""),
      },
      { ...request, dashboardId: grant.dashboardId },
      limits,
    ),
  );
}

/** A public dashboard's report (`platform.public`): 404 as its page, 403 for a format its manifest does not offer. */
export async function renderPublicReport(orgSlug: string, dashboardSlug: string, request: Omit<ReportRequest, "dashboardId" | "version">, limits: ReportLimits = DEFAULT_REPORT_LIMITS): Promise<RenderedReport> {
  const granted = await grantForPublic(orgSlug, dashboardSlug);
  if (!granted) throw notFound("Dashboard");
  if (!granted.parsed.ok) throw new Unavailable(UNAVAILABLE_TO_ANONYMOUS);
  mustOffer(offeredDownloads(granted), request.format);
  const org = await findOrganization(granted.scope.orgId);
  return queued(granted.scope.orgId, () =>
    render(
      {
        granted,
        unpassable: () => new Unavailable(UNAVAILABLE_TO_ANONYMOUS),
        locked: {},
        query: (filters, widgetIds) => queryGranted(granted, "anonymous", filters, widgetIds),
        scopeLine: () => scopeLine("Public dashboard", granted.scope, org?.name ?? ""),
      },
      { ...request, dashboardId: granted.dashboardId },
      limits,
    ),
  );
}

async function render(source: ReportSource, request: ReportRequest, limits: ReportLimits): Promise<RenderedReport> {
  const now = new Date();
  const { model, cut, organizationName } = await reportModel(source, request, limits, now);
  const drawn = await drawPool.get().draw({ model, format: request.format, page: reportPage(request), maxPages: limits.maxPages, maxPngHeight: limits.maxPngHeight, renderMs: limits.renderMs, info: { title: model.title, author: organizationName }, cut });
  return { ...drawn, contentType: request.format === "png" ? "image/png" : "application/pdf", filename: reportFilename(source.granted.slug, now, request.format) };
}
