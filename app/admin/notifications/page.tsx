import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { invoke } from "@/lib/operation";
import { PAGE_LIMIT_MAX } from "@/lib/pagination";
import { currentPagePrincipal } from "@/lib/auth/session";
import {
  deliveryHealth,
  getQuietHours,
  listBaseRules,
  listChannelConfigs,
  listDeadLetters,
  listDemoOutbox,
  listGroupSubscriptions,
  listRules,
  listUnsubscribes,
} from "@/lib/notifications/operations";
import { NotificationsAdmin } from "@/components/notifications/notifications-admin";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Notifications" };

const HEALTH_HOURS = 72;
/** The admin page reads the first page of each list, the largest allowed: the forms offer every rule and group in it. */
const LIST_PAGE = { limit: PAGE_LIMIT_MAX, offset: 0 };
const DEAD_LETTER_PAGE = { limit: 50, offset: 0 };

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
  const [channels, rules, baseRules, groups, unsubscribes, quietHours, health, deadLetters, demoOutbox] = await Promise.all([
    invoke(listChannelConfigs, principal),
    invoke(listRules, principal, { query: LIST_PAGE }),
    invoke(listBaseRules, principal),
    invoke(listGroupSubscriptions, principal, { query: LIST_PAGE }),
    invoke(listUnsubscribes, principal, { query: LIST_PAGE }),
    invoke(getQuietHours, principal),
    invoke(deliveryHealth, principal, { query: { hours: HEALTH_HOURS, limit: 50 } }),
    invoke(listDeadLetters, principal, { query: DEAD_LETTER_PAGE }),
    invoke(listDemoOutbox, principal, { query: DEAD_LETTER_PAGE }),
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
        listPage={LIST_PAGE}
        deadLetters={deadLetters}
        deadLetterPage={DEAD_LETTER_PAGE}
        demoOutbox={demoOutbox}
      />
    </div>
  );
}
