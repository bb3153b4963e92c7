import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentPagePrincipal } from "@/lib/auth/session";
import { listApiKeys } from "@/lib/auth/api-keys-operations";
import { listLocations } from "@/lib/locations/operations";
import { invoke } from "@/lib/operation";
import { PAGE_LIMIT_MAX } from "@/lib/pagination";
import { ApiKeysAdmin } from "@/components/api-keys/api-keys-admin";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "API keys" };

const LIST_PAGE = { limit: PAGE_LIMIT_MAX, offset: 0 };

export default async function ApiKeysAdminPage() {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin");
  if (principal.role !== "admin") {
    return (
      <div className="page">
        <h1>API keys</h1>
        <div className="error-box" role="alert">
          <strong>Admins only.</strong> Your organization&apos;s admins create and revoke API keys; you are signed in as {principal.role.replace("_", " ")}.
        </div>
      </div>
    );
  }
  const [keys, locations] = await Promise.all([invoke(listApiKeys, principal, { query: LIST_PAGE }), invoke(listLocations, principal, { query: LIST_PAGE })]);
  return (
    <div className="page">
      <h1>API keys</h1>
      <p className="muted">
        Keys let scripts and CI call the API for {principal.orgName} as an admin limited to the key&apos;s scopes and locations. A key is shown once; send it
        as <code>Authorization: Bearer qk_…</code>.
      </p>
      <ApiKeysAdmin initialKeys={keys} locations={locations.items.map((l) => ({ id: l.id, name: l.name }))} listPage={LIST_PAGE} />
    </div>
  );
}
