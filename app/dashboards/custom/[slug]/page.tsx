import type { Metadata } from "next";
import Link from "next/link";
import { redirect } from "next/navigation";
import { currentPagePrincipal } from "@/lib/auth/session";
import { isEditor } from "@/lib/dashboards/policy";
import { DashboardMissing } from "@/components/dashboards/dashboard-missing";
import { DashboardView } from "@/components/dashboards/dashboard-view";
import { UnpassableDashboard } from "@/components/dashboards/unpassable-dashboard";
import { ViewerActions } from "@/components/dashboards/viewer-actions";
import { DownloadReport } from "@/components/reports/download-report";
import styles from "@/components/dashboards/dashboards.module.css";
import { loadDashboard, type SearchParams } from "@/lib/dashboards/page-data";
import { filterSummaries } from "@/lib/dashboards/filter-values";

export const dynamic = "force-dynamic";

interface PageProps {
  params: Promise<{ slug: string }>;
  searchParams: Promise<SearchParams>;
}

export async function generateMetadata({ params }: PageProps): Promise<Metadata> {
  return { title: `Dashboard ${(await params).slug}` };
}

/** One dashboard with its first data, rendered on the server (what an embed consumer sees: ./preview). */
export default async function DashboardPage({ params, searchParams }: PageProps) {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin");
  const [{ slug }, query] = await Promise.all([params, searchParams]);
  const loaded = await loadDashboard(principal, slug, query);
  if (!loaded) return <DashboardMissing />;
  if (!loaded.ok) {
    // A stored manifest that no longer validates: its problems for editors, a sentence for viewers, never a 500.
    const box = <UnpassableDashboard slug={loaded.dashboard.slug} version={loaded.version} errors={loaded.errors} />;
    return (
      <div className={styles.pageWide}>
        <nav aria-label="Breadcrumb" className="muted" style={{ fontSize: "0.88rem", marginBottom: "0.35rem" }}>
          <Link href="/dashboards/custom">Dashboards</Link> / {loaded.dashboard.slug}
        </nav>
        <div className={styles.titleRow}>
          <h1>{loaded.dashboard.name}</h1>
        </div>
        {box}
      </div>
    );
  }
  const { record, view, version, filters, results, timeZone, clicks } = loaded;
  const dashboard = (
    <DashboardView
      key={`${record.id}:${version}`}
      view={view}
      target={{ kind: "dashboard", id: record.id, version }}
      initialResults={results}
      initialFilters={filters}
      timeZone={timeZone}
      clicks={clicks}
      alerts={version === "draft" ? undefined : { dashboardId: record.id }}
    />
  );
  const editor = isEditor(principal);
  return (
    <div className={styles.pageWide}>
      <nav aria-label="Breadcrumb" className="muted" style={{ fontSize: "0.88rem", marginBottom: "0.35rem" }}>
        <Link href="/dashboards/custom">Dashboards</Link> / {record.slug}
      </nav>
      <div className={styles.titleRow}>
        <h1>{record.name}</h1>
        <span className={`chip ${version === "draft" ? styles.statusDraft : "good"}`} data-testid="dashboard-status">
          {version === "draft" ? "Draft" : `Published · version ${version}`}
        </span>
        <DownloadReport dashboardId={record.id} showing={version === "draft" ? "draft" : "published"} />
        {editor && (
          <ViewerActions
            dashboardId={record.id}
            slug={record.slug}
            showing={version === "draft" ? "draft" : "published"}
            publishedVersion={record.published_version}
            hasUnpublishedChanges={record.has_unpublished_changes}
            allowEmbed={record.platform.allow_embed}
            filterWidgets={filterSummaries(view.widgets, results)}
          />
        )}
      </div>
      {editor && version === "draft" && record.published_version !== null && record.has_unpublished_changes && (
        <p className={styles.notice} role="note">You are looking at the draft. Viewers and embeds see published version {record.published_version} until you publish.</p>
      )}
      {editor && record.published_version === null && (
        <p className={styles.notice} role="note">Not published yet: only admins and general managers can see this draft.</p>
      )}
      {dashboard}
    </div>
  );
}
