import type { Metadata } from "next";
import Link from "next/link";
import { headers } from "next/headers";
import { findOrganization } from "@/lib/auth/directory";
import { currentPagePrincipal } from "@/lib/auth/session";
import { isEditor } from "@/lib/dashboards/policy";
import { isInstanceAdmin } from "@/lib/instance/admins";
import { SignOutButton } from "@/components/sign-out-button";
import { SignOutEverywhereButton } from "@/components/sign-out-everywhere-button";
import { InboxBell } from "@/components/notifications/inbox-bell";
import { MainNav, type NavLink } from "@/components/main-nav";
import { OrgTimeZoneProvider } from "@/components/org-time-zone";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Quarry", template: "%s · Quarry" },
  description: "Dashboards as code, document search and notifications",
};

export default async function RootLayout({ children }: { children: React.ReactNode }) {
  // Embeds and dashboard previews render without the app's chrome (proxy.ts marks them), still in a main landmark.
  if ((await headers()).get("x-quarry-chrome") === "bare") {
    return (
      <html lang="en">
        <body>
          <main>{children}</main>
        </body>
      </html>
    );
  }
  const principal = await currentPagePrincipal();
  // Instance admins (migration 0053) make organizations; one primary-key probe per page.
  const instanceAdmin = principal ? await isInstanceAdmin(principal) : false;
  // Times on every page read in the organization's zone, named (components/org-time-zone.tsx).
  const timeZone = principal ? ((await findOrganization(principal.orgId))?.timeZone ?? "UTC") : null;
  const links: NavLink[] = principal
    ? [
        { href: "/dashboards/custom", label: "Dashboards" },
        // Widget alerts (issue 45): every member makes and reads their own.
        { href: "/alerts", label: "Alerts" },
        // The metrics catalog (issue 48): every member reads the shared definitions; admins certify.
        { href: "/metrics", label: "Metrics" },
        // The organization's own tables (issue 42): every member lists them, admins load and drop (docs/data.md).
        { href: "/data", label: "Data" },
        { href: "/documents", label: "Documents" },
        { href: "/chat", label: "Chat" },
        ...(principal.role === "admin" ? [{ href: "/admin/notifications", label: "Notifications" }] : []),
        // Scheduled reports are editors' (the page's own rule, isEditor): general managers see this admin link too.
        ...(isEditor(principal) ? [{ href: "/admin/reports", label: "Reports" }] : []),
        ...(principal.role === "admin" ? [{ href: "/admin/api-keys", label: "API keys" }] : []),
        // People and places are managed by admins of every location (lib/members/members.ts).
        ...(principal.role === "admin" && principal.locationIds === null ? [{ href: "/admin/members", label: "Members" }, { href: "/admin/locations", label: "Locations" }, { href: "/admin/sso", label: "SSO" }, { href: "/admin/audit", label: "Audit log" }] : []),
        ...(instanceAdmin ? [{ href: "/instance/organizations", label: "Organizations" }] : []),
        { href: "/docs", label: "API" },
      ]
    : [];
  return (
    <html lang="en">
      <body>
        <OrgTimeZoneProvider timeZone={timeZone}>
          <header className="topbar">
            <Link href="/" className="brand">Quarry</Link>
            {principal && <MainNav links={links} />}
            <div className="who">
              {principal ? (
                <>
                  <InboxBell refreshSeconds={60} />
                  <span className="org" data-testid="org-name">{principal.orgName}</span>
                  <span className="role">{principal.role.replace("_", " ")}</span>
                  <SignOutButton />
                  <SignOutEverywhereButton />
                </>
              ) : (
                <Link href="/signin">Sign in</Link>
              )}
            </div>
          </header>
          <main>{children}</main>
        </OrgTimeZoneProvider>
      </body>
    </html>
  );
}
