"use client";

import { useSearchParams } from "next/navigation";
import { endpointUrl } from "@/components/api-client";
import { FILTER_PARAM_PREFIX } from "@/lib/dashboards/wiring";
import { exportDashboard } from "@/lib/reports/export-contract";

interface DownloadReportProps {
  dashboardId: string;
  /** What the page shows: the draft (editors) or the published version. */
  showing: "draft" | "published";
}

/**
 * "Download PDF" (every tab) and "Download PNG" (the tab on screen) of the dashboard as the viewer
 * sees it now: the filters and tab of the page's URL, rendered on the server under the viewer's own
 * access (GET …/export). Plain links, so the browser downloads the file itself.
 */
export function DownloadReport({ dashboardId, showing }: DownloadReportProps) {
  const search = useSearchParams();
  const filters = Object.fromEntries([...search.entries()].filter(([name]) => name.startsWith(FILTER_PARAM_PREFIX)));
  const version = showing === "draft" ? "draft" : undefined;
  const tab = search.get("tab") ?? undefined;
  const pdf = endpointUrl(exportDashboard, { params: { id: dashboardId }, query: { ...filters, format: "pdf", version } });
  const png = endpointUrl(exportDashboard, { params: { id: dashboardId }, query: { ...filters, format: "png", version, tab } });
  return (
    <span role="group" aria-label="Download report" style={{ display: "inline-flex", gap: "0.4rem" }}>
      <a className="button" href={pdf} download data-testid="download-pdf">
        Download PDF
      </a>
      <a className="button" href={png} download data-testid="download-png">
        Download PNG
      </a>
    </span>
  );
}
