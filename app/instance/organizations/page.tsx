import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentPagePrincipal } from "@/lib/auth/session";
import { isInstanceAdmin } from "@/lib/instance/admins";
import { listInstanceOrganizations } from "@/lib/instance/operations";
import { invoke } from "@/lib/operation";
import { PAGE_LIMIT_MAX } from "@/lib/pagination";
import { OrganizationsAdmin } from "@/components/instance/organizations-admin";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Organizations" };

const LIST_PAGE = { limit: PAGE_LIMIT_MAX, offset: 0 };

/** The install's organizations, for its instance admins (issue 43 §1; granted by `quarry instance-admin grant`). */
export default async function InstanceOrganizationsPage() {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin?callbackUrl=/instance/organizations");
  if (!(await isInstanceAdmin(principal))) {
    return (
      <div className="page">
        <h1>Organizations</h1>
        <div className="error-box" role="alert">
          <strong>Instance admins only.</strong> The operator of this install grants it with <code>npm run quarry -- instance-admin grant &lt;email&gt;</code>.
        </div>
      </div>
    );
  }
  const organizations = await invoke(listInstanceOrganizations, principal, { query: LIST_PAGE });
  return (
    <div className="page">
      <h1>Organizations</h1>
      <p className="muted">
        Every organization of this install. Make one with its first admin: they get a one-time link to choose their name and password, and invite the rest
        from their Members page. An organization&apos;s admins never see this page.
      </p>
      <OrganizationsAdmin initial={organizations} listPage={LIST_PAGE} />
    </div>
  );
}
