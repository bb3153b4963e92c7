import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { DashboardView } from "@/components/dashboards/dashboard-view";
import { OfferedDownloads } from "@/components/reports/download-report";
import styles from "@/components/dashboards/dashboards.module.css";
import { loadPublic } from "@/lib/dashboards/embed-page";

export const dynamic = "force-dynamic";

interface PageProps {
  params: Promise<{ org: string; slug: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}

export async function generateMetadata({ params }: PageProps): Promise<Metadata> {
  const { slug } = await params;
  return { title: `Dashboard ${slug}`, robots: { index: false } };
}

/**
 * A published dashboard with `platform.public: true`, read-only without sign-in (SPEC §2.1).
 * Same rules as an embed: render data only, the publisher's location scope, 404 for anything
 * that is not public; a public one whose stored manifest no longer validates says it is
 * temporarily unavailable (HTTP 200, no details). Rendered without app chrome (proxy.ts) and ignoring the viewer's session.
 */
export default async function PublicDashboardPage({ params, searchParams }: PageProps) {
  const [{ org, slug }, query] = await Promise.all([params, searchParams]);
  const page = await loadPublic(decodeURIComponent(org), decodeURIComponent(slug), query);
  if (!page) notFound();
  if (!page.ok) {
    // Public, but its stored manifest no longer passes validation: a neutral sentence (HTTP 200), nothing of the problems.
    return (
      <div className={styles.errorPage} role="alert" data-testid="public-unavailable">
        <h1>{page.reason}</h1>
        <p>Please try again later.</p>
      </div>
    );
  }
  return (
    <div className={styles.bare} data-testid="public-dashboard">
      <h1 className={styles.publicTitle}>{page.name}</h1>
      <OfferedDownloads target={{ kind: "public", org: decodeURIComponent(org), slug: decodeURIComponent(slug) }} offered={page.view.manifest.platform.downloads} />
      <DashboardView
        view={page.view}
        target={{ kind: "public", org: decodeURIComponent(org), slug: decodeURIComponent(slug) }}
        initialResults={page.results}
        initialFilters={page.filters}
        timeZone={page.timeZone}
        clicks={page.clicks}
      />
    </div>
  );
}
