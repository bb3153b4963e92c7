"use client";

import { useSearchParams } from "next/navigation";
import { endpointUrl } from "@/components/api-client";
import { FILTER_PARAM_PREFIX } from "@/lib/dashboards/wiring";
import { exportDashboard, exportEmbed, exportPublicDashboard } from "@/lib/reports/export-contract";
import styles from "./reports.module.css";

interface DownloadReportProps {
  dashboardId: string;
  /** What the page shows: the draft (editors) or the published version. */
  showing: "draft" | "published";
}

/** The `f.<filter id>` parameters of the page's URL: the filters on screen, spelled as every export endpoint takes them. */
function useScreenFilters() {
  const search = useSearchParams();
  const filters = Object.fromEntries([...search.entries()].filter(([name]) => name.startsWith(FILTER_PARAM_PREFIX)));
  return { filters, tab: search.get("tab") ?? undefined };
}

function DownloadLinks({ pdf, png }: { pdf?: string; png?: string }) {
  return (
    <span role="group" aria-label="Download report" style={{ display: "inline-flex", gap: "0.4rem" }}>
      {pdf && (
        <a className="button" href={pdf} download data-testid="download-pdf">
          Download PDF
        </a>
      )}
      {png && (
        <a className="button" href={png} download data-testid="download-png">
          Download PNG
        </a>
      )}
    </span>
  );
}

/**
 * "Download PDF" (every tab) and "Download PNG" (the tab on screen) of the dashboard as the viewer
 * sees it now: the filters and tab of the page's URL, rendered on the server under the viewer's own
 * access (GET …/export). Plain links, so the browser downloads the file itself.
 */
export function DownloadReport({ dashboardId, showing }: DownloadReportProps) {
  const { filters, tab } = useScreenFilters();
  const version = showing === "draft" ? "draft" : undefined;
  const pdf = endpointUrl(exportDashboard, { params: { id: dashboardId }, query: { ...filters, format: "pdf", version } });
  const png = endpointUrl(exportDashboard, { params: { id: dashboardId }, query: { ...filters, format: "png", version, tab } });
  return <DownloadLinks pdf={pdf} png={png} />;
}

/** An embed (its token) or a public link (organization and dashboard slugs): pages without a sign-in. */
export type AnonymousReportTarget = { kind: "embed"; token: string } | { kind: "public"; org: string; slug: string };

/**
 * The same downloads on an embed or public page, for the formats its manifest offers there
 * (`platform.downloads`; nothing when it offers none). The server applies the same access as the page's
 * own queries (the embed's scope and locked filters, the public link's publisher scope) and refuses a
 * format the manifest does not offer.
 */
export function OfferedDownloads({ target, offered }: { target: AnonymousReportTarget; offered: { pdf: boolean; png: boolean } }) {
  const { filters, tab } = useScreenFilters();
  if (!offered.pdf && !offered.png) return null;
  const url = (format: "pdf" | "png") => {
    const query = { ...filters, format, ...(format === "png" ? { tab } : {}) };
    return target.kind === "embed" ? endpointUrl(exportEmbed, { query: { ...query, token: target.token } }) : endpointUrl(exportPublicDashboard, { query: { ...query, org: target.org, slug: target.slug } });
  };
  return (
    <div className={styles.offered}>
      <DownloadLinks pdf={offered.pdf ? url("pdf") : undefined} png={offered.png ? url("png") : undefined} />
    </div>
  );
}
