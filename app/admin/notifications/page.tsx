import type { Metadata } from "next";
import { redirect } from "next/navigation";
import type { z } from "zod";
import type { Endpoint } from "@/lib/api/endpoint";
import { toJsonValue } from "@/lib/json";
import { PAGE_LIMIT_MAX } from "@/lib/pagination";
import { currentPagePrincipal } from "@/lib/auth/session";
import { listChannelConfigs } from "@/lib/notifications/admin/channels";
import { systemClock } from "@/lib/notifications/clock";
import {
  DeliveryHealth,
  listChannelConfigsEndpoint,
  listDeadLettersEndpoint,
  listGroupSubscriptionsEndpoint,
  listRulesEndpoint,
  listUnsubscribesEndpoint,
  QuietHoursView,
} from "@/lib/notifications/contract";
import { deliveryHealth } from "@/lib/notifications/admin/delivery-health";
import { listDeadLetters } from "@/lib/notifications/admin/dead-letters";
import { getQuietHours } from "@/lib/notifications/admin/quiet-hours";
import { listBaseRules, listRules } from "@/lib/notifications/admin/rules";
import { listGroupSubscriptions } from "@/lib/notifications/admin/group-subscriptions";
import { listUnsubscribes } from "@/lib/notifications/admin/unsubscribes";
import type { ResponseOf } from "@/components/api-client";
import { NotificationsAdmin } from "@/components/notifications/notifications-admin";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Notifications" };

const HEALTH_HOURS = 72;
/** The admin page reads the first page of each list, the largest allowed: the forms offer every rule and group in it. */
const LIST_PAGE = { limit: PAGE_LIMIT_MAX, offset: 0 };
const DEAD_LETTER_PAGE = { limit: 50, offset: 0 };
const shape = <T extends z.ZodType>(schema: T, value: unknown): z.output<T> => schema.parse(toJsonValue(value));
/** A service's result as `endpoint` answers it over HTTP: the page hands it to the client's swr cache as is. */
const answered = <E extends Endpoint>(endpoint: E, value: unknown): ResponseOf<E> => (endpoint.response ? endpoint.response.parse(toJsonValue(value)) : undefined) as ResponseOf<E>;

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
  const now = systemClock.now();
  const [channels, rules, groups, unsubscribes, quietHours, health, dead] = await Promise.all([
    listChannelConfigs(principal),
    listRules(principal, LIST_PAGE, now),
    listGroupSubscriptions(principal, LIST_PAGE),
    listUnsubscribes(principal, LIST_PAGE),
    getQuietHours(principal),
    deliveryHealth(principal, { hours: HEALTH_HOURS, limit: 50 }, now),
    listDeadLetters(principal, DEAD_LETTER_PAGE),
  ]);
  return (
    <div className="page">
      <h1>Notifications</h1>
      <p className="muted">Who hears about what in {principal.orgName}, and why a message did or did not arrive.</p>
      <NotificationsAdmin
        channels={answered(listChannelConfigsEndpoint, channels)}
        rules={answered(listRulesEndpoint, rules)}
        baseRules={listBaseRules().items}
        groups={answered(listGroupSubscriptionsEndpoint, groups)}
        unsubscribes={answered(listUnsubscribesEndpoint, unsubscribes)}
        quietHours={shape(QuietHoursView, quietHours)}
        health={shape(DeliveryHealth, health)}
        healthHours={HEALTH_HOURS}
        listPage={LIST_PAGE}
        deadLetters={answered(listDeadLettersEndpoint, dead)}
        deadLetterPage={DEAD_LETTER_PAGE}
      />
    </div>
  );
}
