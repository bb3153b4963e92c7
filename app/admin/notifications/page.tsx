import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { invoke } from "@/lib/api/operation";
import { currentPagePrincipal } from "@/lib/auth/session";
import {
  deliveryHealth,
  getQuietHours,
  listBaseRules,
  listChannelConfigs,
  listDeadLetters,
  listGroupSubscriptions,
  listRules,
  listUnsubscribes,
} from "@/lib/notifications/operations";
import { NotificationsAdmin } from "@/components/notifications/notifications-admin";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Notifications" };

const HEALTH_HOURS = 72;

export default async function NotificationsAdminPage() {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin");
  if (principal.role !== "admin") {
    return (
      <div className="page">
        <h1>Notifications</h1>
        <div className="error-box" role="alert">
          <strong>Admins only.</strong> Channels, alert rules and delivery health are managed by your organization&apos;s admins; you are signed in as{" "}
          {principal.role.replace("_", " ")}. Your own notifications are in the bell at the top right.
        </div>
      </div>
    );
  }
  // Each answer has the shape its endpoint sends over HTTP: the page hands it to the client's swr cache as is.
  const [channels, rules, baseRules, groups, unsubscribes, quietHours, health, deadLetters] = await Promise.all([
    invoke(listChannelConfigs, principal),
    invoke(listRules, principal),
    invoke(listBaseRules, principal),
    invoke(listGroupSubscriptions, principal),
    invoke(listUnsubscribes, principal),
    invoke(getQuietHours, principal),
    invoke(deliveryHealth, principal, { query: { hours: HEALTH_HOURS, limit: 50 } }),
    invoke(listDeadLetters, principal, { query: { page: 1, page_size: 50 } }),
  ]);
  return (
    <div className="page">
      <h1>Notifications</h1>
      <p className="muted">Who hears about what in {principal.orgName}, and why a message did or did not arrive.</p>
      <NotificationsAdmin
        channels={channels}
        rules={rules}
        baseRules={baseRules.items}
        groups={groups}
        unsubscribes={unsubscribes}
        quietHours={quietHours}
        health={health}
        healthHours={HEALTH_HOURS}
        deadLetters={deadLetters}
      />
    </div>
  );
}
