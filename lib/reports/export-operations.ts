import "server-only";
import { defineOperation } from "@/lib/operation";
import { decodeFilterValue } from "@/lib/dashboards/wiring";
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

export const exportDashboard = defineOperation(contract.exportDashboard, async ({ principal, params, query }) => {
  const { format, paper, orientation, tab, width, version } = query;
  const report = await reports.renderDashboardReport(principal, { dashboardId: params.id, filters: filtersOf(query), format, paper, orientation, tab, width, version });
  return new Response(Buffer.from(report.bytes), {
    headers: {
      "Content-Type": report.contentType,
      "Content-Disposition": `attachment; filename="${report.filename.replace(/[^\w.-]/g, "_")}"`,
      "Cache-Control": "private, no-store",
      "X-Report-Pages": String(report.pages),
      "X-Report-Cut": String(report.cut.length),
    },
  });
});
