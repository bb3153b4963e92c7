import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentPagePrincipal } from "@/lib/auth/session";
import { invoke } from "@/lib/operation";
import { listDashboards } from "@/lib/dashboards/operations";
import { isEditor } from "@/lib/dashboards/policy";
import { DashboardList } from "@/components/dashboards/dashboard-list";
import { ListActions } from "@/components/dashboards/list-actions";
import styles from "@/components/dashboards/dashboards.module.css";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Dashboards" };

/** Every dashboard the caller may see (the service decides: editors all, viewers published ones for their role). */
export default async function DashboardsPage() {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin");
  // The same shape GET /api/v1/custom-dashboards answers: the client list starts from it and keeps it fresh.
  const initial = await invoke(listDashboards, principal);
  const { items } = initial;
  const editor = isEditor(principal);
  return (
    <div className="page">
      <div className={styles.titleRow}>
        <h1>Dashboards</h1>
        {editor && <ListActions hasSample={items.some((d) => d.slug === "sample-sales")} />}
      </div>
      <p className="muted">
        {editor ? "Analytics pages of your organization, defined as YAML manifests. Drafts are visible to admins and general managers only." : "Published analytics pages of your organization."}
      </p>
      <DashboardList initial={initial} editor={editor} />
    </div>
  );
}
