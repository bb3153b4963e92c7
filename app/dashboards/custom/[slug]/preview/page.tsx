import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentPagePrincipal } from "@/lib/auth/session";
import { DashboardMissing } from "@/components/dashboards/dashboard-missing";
import { DashboardView } from "@/components/dashboards/dashboard-view";
import { UnpassableDashboard } from "@/components/dashboards/unpassable-dashboard";
import styles from "@/components/dashboards/dashboards.module.css";
import { loadDashboard, type SearchParams } from "@/lib/dashboards/page-data";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Preview" };

interface PageProps {
  params: Promise<{ slug: string }>;
  searchParams: Promise<SearchParams>;
}

/** Exactly what an embed consumer sees: no app chrome, filters included (proxy.ts drops the top bar). */
export default async function DashboardPreviewPage({ params, searchParams }: PageProps) {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin");
  const [{ slug }, query] = await Promise.all([params, searchParams]);
  const loaded = await loadDashboard(principal, slug, query);
  if (!loaded) return <DashboardMissing bare />;
  if (!loaded.ok) {
    return (
      <div className={styles.bare} data-testid="dashboard-preview">
        <UnpassableDashboard slug={loaded.dashboard.slug} version={loaded.version} errors={loaded.errors} />
      </div>
    );
  }
  return (
    <div className={styles.bare} data-testid="dashboard-preview">
      {/* As in an embed (app/embed/[token]/page.tsx): a heading for screen readers, none on screen. */}
      <h1 className="visually-hidden">{loaded.view.manifest.metadata.name}</h1>
      <DashboardView
        view={loaded.view}
        target={{ kind: "dashboard", id: loaded.record.id, version: loaded.version }}
        initialResults={loaded.results}
        initialFilters={loaded.filters}
        timeZone={loaded.timeZone}
        clicks={loaded.clicks}
      />
    </div>
  );
}
