import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentPagePrincipal } from "@/lib/auth/session";
import { listLocations } from "@/lib/locations/operations";
import { invoke } from "@/lib/operation";
import { PAGE_LIMIT_MAX } from "@/lib/pagination";
import { LocationsAdmin } from "@/components/members/locations-admin";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Locations" };

const LIST_QUERY = { limit: PAGE_LIMIT_MAX, offset: 0, archived: "true" } as const;

export default async function LocationsAdminPage() {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin?callbackUrl=/admin/locations");
  if (principal.role !== "admin" || principal.locationIds !== null) {
    return (
      <div className="page">
        <h1>Locations</h1>
        <div className="error-box" role="alert"><strong>Admins of every location only.</strong></div>
      </div>
    );
  }
  const initial = await invoke(listLocations, principal, { query: LIST_QUERY });
  return (
    <div className="page">
      <h1>Locations</h1>
      <p className="muted">
        The places of {principal.orgName}: members&apos; scopes and data tables&apos; location columns refer to them by id. Archiving keeps a location&apos;s
        data and the scopes that name it; it leaves pickers and cannot be granted anew.
      </p>
      <LocationsAdmin initial={initial} listQuery={LIST_QUERY} />
    </div>
  );
}
