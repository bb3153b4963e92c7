"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { EmbedDialog } from "./embed-dialog";
import { ScheduleReportDialog } from "@/components/reports/schedule-report-dialog";
import { publishDashboard } from "@/lib/dashboards/contract";
import { callApi } from "@/components/api-client";
import type { FilterSummary } from "@/lib/dashboards/filter-values";
import styles from "./dashboards.module.css";

interface ViewerActionsProps {
  dashboardId: string;
  slug: string;
  showing: "draft" | "published";
  publishedVersion: number | null;
  hasUnpublishedChanges: boolean;
  allowEmbed: boolean;
  filterWidgets: FilterSummary[];
}

/** Editor controls above a dashboard: draft/published switch, edit, preview, publish, embed and scheduled reports. */
export function ViewerActions({ dashboardId, slug, showing, publishedVersion, hasUnpublishedChanges, allowEmbed, filterWidgets }: ViewerActionsProps) {
  const router = useRouter();
  const [publishing, setPublishing] = useState(false);
  const [message, setMessage] = useState<{ tone: "error" | "success"; text: string } | null>(null);
  const base = `/dashboards/custom/${encodeURIComponent(slug)}`;

  async function publish() {
    setPublishing(true);
    setMessage(null);
    try {
      const published = await callApi(publishDashboard, { params: { id: dashboardId } });
      setMessage({ tone: "success", text: `Published version ${published.published_version}` });
      router.push(base);
      router.refresh();
    } catch (error) {
      setMessage({ tone: "error", text: `Not published: ${(error as Error).message}` });
    } finally {
      setPublishing(false);
    }
  }

  return (
    <div className={styles.actions}>
      {publishedVersion !== null && (
        <div className={styles.versionSwitch} role="group" aria-label="Version shown">
          <Link href={base} aria-current={showing === "published" ? "page" : undefined}>
            Published
          </Link>
          <Link href={`${base}?version=draft`} aria-current={showing === "draft" ? "page" : undefined}>
            Draft{hasUnpublishedChanges ? " •" : ""}
          </Link>
        </div>
      )}
      <Link className="button" href={`${base}/edit`}>
        Edit
      </Link>
      {/* A full page load: the preview has no app chrome, which the persistent root layout only drops on a fresh request. */}
      <a className="button" href={`${base}/preview${showing === "draft" ? "?version=draft" : ""}`} target="_blank" rel="noreferrer">
        Preview
      </a>
      <button type="button" className="button primary" onClick={publish} disabled={publishing || (publishedVersion !== null && !hasUnpublishedChanges)}>
        {publishing ? "Publishing…" : publishedVersion !== null && !hasUnpublishedChanges ? "Published" : "Publish"}
      </button>
      <EmbedDialog dashboardId={dashboardId} published={publishedVersion !== null} allowEmbed={allowEmbed} filterWidgets={filterWidgets} />
      <ScheduleReportDialog dashboardId={dashboardId} published={publishedVersion !== null} filterWidgets={filterWidgets} />
      {message && (
        <span role="status" className={message.tone === "error" ? styles.error : styles.success}>
          {message.text}
        </span>
      )}
    </div>
  );
}
