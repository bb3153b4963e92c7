import type { Metadata } from "next";
import Link from "next/link";
import { notFound, redirect } from "next/navigation";
import { getAlert } from "@/lib/alerts/operations";
import { findOrganization } from "@/lib/auth/directory";
import { currentPagePrincipal } from "@/lib/auth/session";
import { isEditor } from "@/lib/dashboards/policy";
import { NotFound } from "@/lib/errors";
import { listLocations } from "@/lib/locations/operations";
import { invoke } from "@/lib/operation";
import { PAGE_LIMIT_MAX } from "@/lib/pagination";
import { AlertDetail } from "@/components/alerts/alert-detail";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Alert" };

export default async function AlertPage({ params }: { params: Promise<{ id: string }> }) {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin");
  const { id } = await params;
  const alert = await invoke(getAlert, principal, { params: { id } }).catch((error: unknown) => {
    if (error instanceof NotFound) return null;
    throw error;
  });
  if (!alert) notFound();
  const [org, locations] = await Promise.all([findOrganization(principal.orgId), invoke(listLocations, principal, { query: { limit: PAGE_LIMIT_MAX, offset: 0, archived: "true" } })]);
  const timeZone = org?.timeZone ?? "UTC";
  const locationNames = Object.fromEntries(locations.items.map((l) => [l.id, l.name]));
  return (
    <div className="page">
      <nav aria-label="Breadcrumb" className="muted" style={{ fontSize: "0.88rem", marginBottom: "0.35rem" }}>
        <Link href="/alerts">Alerts</Link> / {alert.name}
      </nav>
      <h1>{alert.name}</h1>
      {/* The server decides again on every action; this only hides buttons a recipient could not use. */}
      <AlertDetail initial={alert} canChange={alert.owner_id === principal.userId || isEditor(principal)} timeZone={timeZone} locationNames={locationNames} />
    </div>
  );
}
