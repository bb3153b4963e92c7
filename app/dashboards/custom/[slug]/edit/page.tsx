import type { Metadata } from "next";
import Link from "next/link";
import { redirect } from "next/navigation";
import { currentPagePrincipal } from "@/lib/auth/session";
import { isEditor } from "@/lib/dashboards/policy";
import { DashboardMissing } from "@/components/dashboards/dashboard-missing";
import { ManifestEditor } from "@/components/dashboards/manifest-editor";
import { VersionHistory } from "@/components/dashboards/version-history";
import styles from "@/components/dashboards/dashboards.module.css";
import { loadDashboard, type SearchParams } from "@/lib/dashboards/page-data";
import { listTables } from "@/lib/data/tables";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Edit dashboard" };

interface PageProps {
  params: Promise<{ slug: string }>;
  searchParams: Promise<SearchParams>;
}

/** The manifest editor for admins and general managers: the draft's YAML and a live preview. */
export default async function EditDashboardPage({ params, searchParams }: PageProps) {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin");
  const [{ slug }, query] = await Promise.all([params, searchParams]);
  if (!isEditor(principal)) {
    return (
      <div className="page">
        <div className={styles.errorBox} role="alert">
          <strong>Only admins and general managers edit dashboards.</strong> You are signed in as {principal.role.replace("_", " ")}.{" "}
          <Link href={`/dashboards/custom/${encodeURIComponent(slug)}`}>Open the dashboard</Link>
        </div>
      </div>
    );
  }
  // The draft with its YAML, under one grant; a draft that no longer validates opens with its problems, to be fixed here.
  // The organization's own tables too: the editor checks and completes their names (issue 42 §4).
  const [loaded, ownTables] = await Promise.all([
    loadDashboard(principal, slug, { ...query, version: "draft" }, { includeYaml: true, includeRollups: true }),
    // Each one carries org_id first, as the warehouse tables do (lib/db/warehouse.ts orgReaderTable).
    listTables(principal).then((tables) => tables.map((t) => ({ name: t.name, columns: [{ name: "org_id", type: "text" }, ...t.columns], own: true }))),
  ]);
  const record = loaded?.record;
  if (!loaded || !record) return <DashboardMissing />;
  return (
    <div className={styles.pageWide}>
      <nav aria-label="Breadcrumb" className="muted" style={{ fontSize: "0.88rem", marginBottom: "0.35rem" }}>
        <Link href="/dashboards/custom">Dashboards</Link> / <Link href={`/dashboards/custom/${record.slug}`}>{record.slug}</Link> / edit
      </nav>
      <div className={styles.titleRow}>
        <h1>Edit {record.name}</h1>
        <span className={`chip ${record.status === "published" ? "good" : styles.statusDraft}`}>
          {record.published_version === null ? "Never published" : `Published · version ${record.published_version}`}
        </span>
      </div>
      <ManifestEditor
        dashboardId={record.id}
        slug={record.slug}
        initialYaml={record.spec_yaml ?? ""}
        initialView={loaded.ok ? loaded.view : null}
        initialProblems={loaded.ok ? [] : (loaded.errors ?? [])}
        initialResults={loaded.ok ? loaded.results : {}}
        initialFilters={loaded.ok ? loaded.filters : {}}
        timeZone={loaded.timeZone}
        initialRollups={loaded.ok ? loaded.rollups : null}
        ownTables={ownTables}
      />
      <VersionHistory dashboardId={record.id} publishedVersion={record.published_version} />
    </div>
  );
}
