import type { Metadata } from "next";
import { EmbedRenewal } from "@/components/dashboards/embed-renewal";
import { EmbedView } from "@/components/dashboards/embed-view";
import styles from "@/components/dashboards/dashboards.module.css";
import { loadEmbed } from "@/lib/dashboards/embed-page";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Embedded dashboard", robots: { index: false } };

interface PageProps {
  params: Promise<{ token: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}

/**
 * What a partner's iframe shows: the published version the token is bound to, without app
 * chrome (proxy.ts), locked filters read-only; an expiring token can be renewed by the framing page
 * (components/dashboards/embed-view.tsx), also one that had expired before the page loaded
 * (components/dashboards/embed-renewal.tsx). A bad token is an explanation, never a 500; a
 * version whose stored manifest no longer validates is "temporarily unavailable" (HTTP 200).
 */
export default async function EmbedPage({ params, searchParams }: PageProps) {
  const [{ token }, query] = await Promise.all([params, searchParams]);
  const page = await loadEmbed(decodeURIComponent(token), query);
  if (!page.ok && page.unavailable) {
    // Its stored manifest no longer passes validation: a neutral sentence (HTTP 200), nothing of the problems.
    return (
      <div className={styles.errorPage} role="alert" data-testid="embed-unavailable">
        <h1>{page.reason}</h1>
        <p>Please try again later.</p>
      </div>
    );
  }
  if (!page.ok && page.renewal) {
    return <EmbedRenewal token={decodeURIComponent(token)} reason={page.reason} {...page.renewal} />;
  }
  if (!page.ok) {
    return (
      <div className={styles.errorPage} role="alert" data-testid="embed-error">
        <h1>This dashboard cannot be shown</h1>
        <p>{page.reason}.</p>
        <p>Ask the owner of this page for a new embed link.</p>
      </div>
    );
  }
  return (
    <div className={styles.bare} data-testid="embed">
      {/* The page's one heading for screen readers: the embed's own title band shows its name as text, if at all. */}
      <h1 className="visually-hidden">{page.view.manifest.metadata.name}</h1>
      <EmbedView
        token={decodeURIComponent(token)}
        session={page.session}
        view={page.view}
        initialResults={page.results}
        initialFilters={page.filters}
        timeZone={page.timeZone}
        lockedFilters={page.lockedFilters}
        clicks={page.clicks}
      />
    </div>
  );
}
