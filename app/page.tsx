import Link from "next/link";
import { redirect } from "next/navigation";
import { currentPagePrincipal } from "@/lib/auth/session";
import { invoke } from "@/lib/operation";
import { listLocations } from "@/lib/locations/operations";
import { PageNote } from "@/components/page-note";

export default async function HomePage() {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin");
  const locations = await invoke(listLocations, principal);
  const { items } = locations;
  return (
    <div className="page">
      <h1>{principal.orgName}</h1>
      <p className="muted">
        Signed in as {principal.role.replace("_", " ")}
        {principal.locationIds ? `, scoped to ${principal.locationIds.length} locations` : ", all locations"}.
      </p>
      <section className="cards">
        <Link className="card" href="/dashboards/custom"><h2>Dashboards</h2><p>Analytics pages defined as YAML manifests.</p></Link>
        <Link className="card" href="/documents"><h2>Documents</h2><p>Upload, index and search your files.</p></Link>
        <Link className="card" href="/docs"><h2>API reference</h2><p>Every endpoint, with a bearer token.</p></Link>
      </section>
      <h2>Locations</h2>
      <table className="grid-table">
        <thead><tr><th>Code</th><th>Name</th><th>City</th><th>Region</th></tr></thead>
        <tbody>
          {items.map((l) => (
            <tr key={l.id}><td>{l.code}</td><td>{l.name}</td><td>{l.city}</td><td>{l.region}</td></tr>
          ))}
        </tbody>
      </table>
      <PageNote page={locations} what="locations" />
    </div>
  );
}
