import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentPagePrincipal } from "@/lib/auth/session";
import { NotFound } from "@/lib/errors";
import { listLocations } from "@/lib/locations/operations";
import { listMembers } from "@/lib/members/operations";
import { invoke } from "@/lib/operation";
import { PAGE_LIMIT_MAX } from "@/lib/pagination";
import { getSsoSettings } from "@/lib/sso/operations";
import { redirectUriOf } from "@/lib/sso/settings";
import { SsoAdmin } from "@/components/sso/sso-admin";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Single sign-on" };

const LIST_PAGE = { limit: PAGE_LIMIT_MAX, offset: 0 };

export default async function SsoAdminPage() {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin?callbackUrl=/admin/sso");
  if (principal.role !== "admin" || principal.locationIds !== null) {
    return (
      <div className="page">
        <h1>Single sign-on</h1>
        <div className="error-box" role="alert">
          <strong>Admins of every location only.</strong> Ask an admin of {principal.orgName} to set up single sign-on.
        </div>
      </div>
    );
  }
  const [settings, members, locations] = await Promise.all([
    invoke(getSsoSettings, principal, {}).catch((error: unknown) => {
      if (error instanceof NotFound) return null;
      throw error;
    }),
    invoke(listMembers, principal, { query: LIST_PAGE }),
    invoke(listLocations, principal, { query: LIST_PAGE }),
  ]);
  const admins = members.items.filter((m) => m.role === "admin" && m.location_ids.length === 0 && m.status === "active");
  return (
    <div className="page">
      <h1>Single sign-on</h1>
      <p className="muted">
        Members of {principal.orgName} sign in through your OpenID Connect provider. Register this redirect URI with it: <code>{redirectUriOf(principal.orgSlug)}</code>.
        Accounts are made at first sign-in for addresses of your domains; role and locations follow the provider&apos;s claim at every sign-in.
      </p>
      <SsoAdmin
        initial={settings}
        admins={admins.map((a) => ({ id: a.id, label: `${a.name} <${a.email}>` }))}
        locations={locations.items.filter((l) => !l.archived_at).map((l) => ({ id: l.id, name: l.name }))}
      />
    </div>
  );
}
