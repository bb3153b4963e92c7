import "server-only";
import { defineOperation } from "@/lib/operation";
import { EMBED_GRANT_RATE_LIMIT } from "@/lib/dashboards/contract";
import { verifyEmbedToken } from "@/lib/dashboards/embeds";
import { decodeFilterValue } from "@/lib/dashboards/wiring";
import { enforceLimit } from "@/lib/security/rate-limit";
import * as contract from "./export-contract";
import * as reports from "./render";

/** The `f.<filter id>` parameters of the query as filter values. */
function filtersOf(query: Record<string, unknown>): Record<string, unknown> {
  const filters: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(query)) {
    if (!name.startsWith(contract.EXPORT_FILTER_PREFIX)) continue;
    const text = Array.isArray(raw) ? raw[0] : raw;
    if (typeof text === "string") filters[name.slice(contract.EXPORT_FILTER_PREFIX.length)] = decodeFilterValue(text);
  }
  return filters;
}

/** The file as an attachment, with its page count and how many things a limit cut. */
function fileResponse(report: reports.RenderedReport): Response {
  return new Response(Buffer.from(report.bytes), {
    headers: {
      "Content-Type": report.contentType,
      "Content-Disposition": `attachment; filename="${report.filename.replace(/[^\w.-]/g, "_")}"`,
      "Cache-Control": "private, no-store",
      "X-Report-Pages": String(report.pages),
      "X-Report-Cut": String(report.cut.length),
    },
  });
}

export const exportDashboard = defineOperation(contract.exportDashboard, async ({ principal, params, query }) => {
  const { format, paper, orientation, tab, width, version } = query;
  return fileResponse(await reports.renderDashboardReport(principal, { dashboardId: params.id, filters: filtersOf(query), format, paper, orientation, tab, width, version }));
});

export const exportEmbed = defineOperation(contract.exportEmbed, async ({ query }) => {
  const { token, format, paper, orientation, tab, width } = query;
  const grant = await verifyEmbedToken(token);
  // A render is one of the grant's requests, like a query: the same per-grant limit over all its viewers.
  await enforceLimit(`embed grant ${grant.embedId}`, EMBED_GRANT_RATE_LIMIT);
  return fileResponse(await reports.renderEmbedReport(grant, { filters: filtersOf(query), format, paper, orientation, tab, width }));
});

export const exportPublicDashboard = defineOperation(contract.exportPublicDashboard, async ({ query }) => {
  const { org, slug, format, paper, orientation, tab, width } = query;
  return fileResponse(await reports.renderPublicReport(org, slug, { filters: filtersOf(query), format, paper, orientation, tab, width }));
});
