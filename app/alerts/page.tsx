import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { listAlerts } from "@/lib/alerts/operations";
import { findOrganization } from "@/lib/auth/directory";
import { currentPagePrincipal } from "@/lib/auth/session";
import { invoke } from "@/lib/operation";
import { PAGE_LIMIT_MAX } from "@/lib/pagination";
import { AlertsList } from "@/components/alerts/alerts-list";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Alerts" };

export default async function AlertsPage() {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin");
  const [alerts, org] = await Promise.all([invoke(listAlerts, principal, { query: { limit: PAGE_LIMIT_MAX, offset: 0 } }), findOrganization(principal.orgId)]);
  return (
    <div className="page">
      <h1>Alerts</h1>
      <p className="muted">
        Alerts on what a dashboard shows: the widget&apos;s own figures, for each recipient in their own scope. Make one with &quot;Alert me&quot; on a KPI tile, a
        chart or a table of a published dashboard, or declare it under the dashboard manifest&apos;s <code>alerts:</code>.
      </p>
      <AlertsList alerts={alerts.items} timeZone={org?.timeZone ?? "UTC"} />
      {alerts.total > alerts.items.length && (
        <p className="muted">
          Showing the newest {alerts.items.length} of {alerts.total}.
        </p>
      )}
    </div>
  );
}
