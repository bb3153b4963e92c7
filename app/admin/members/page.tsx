import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentPagePrincipal } from "@/lib/auth/session";
import { listLocations } from "@/lib/locations/operations";
import { listInvitations, listMembers } from "@/lib/members/operations";
import { invoke } from "@/lib/operation";
import { PAGE_LIMIT_MAX } from "@/lib/pagination";
import { MembersAdmin } from "@/components/members/members-admin";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Members" };

const LIST_PAGE = { limit: PAGE_LIMIT_MAX, offset: 0 };

export default async function MembersAdminPage() {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin?callbackUrl=/admin/members");
  if (principal.role !== "admin" || principal.locationIds !== null) {
    return (
      <div className="page">
        <h1>Members</h1>
        <div className="error-box" role="alert">
          <strong>Admins of every location only.</strong> Ask an admin of {principal.orgName} to invite people or change roles.
        </div>
      </div>
    );
  }
  const [members, invitations, locations] = await Promise.all([
    invoke(listMembers, principal, { query: LIST_PAGE }),
    invoke(listInvitations, principal, { query: LIST_PAGE }),
    invoke(listLocations, principal, { query: LIST_PAGE }),
  ]);
  return (
    <div className="page">
      <h1>Members</h1>
      <p className="muted">
        People of {principal.orgName}: invite them by e-mail, change their role or locations (their sessions end at once), deactivate or delete them. The last
        active admin cannot be demoted or removed.
      </p>
      <MembersAdmin selfId={principal.userId} initialMembers={members} initialInvitations={invitations} locations={locations.items.map((l) => ({ id: l.id, name: l.name }))} listPage={LIST_PAGE} />
    </div>
  );
}
