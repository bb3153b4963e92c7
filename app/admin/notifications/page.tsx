import { redirect } from "next/navigation";
import type { z } from "zod";
import { toJsonValue } from "@/lib/api/json";
import { currentPagePrincipal } from "@/lib/auth/session";
import { listChannelConfigs } from "@/lib/notifications/channels";
import { systemClock } from "@/lib/notifications/clock";
import { DeliveryHealth, GroupSubscriptionView, RuleView, ChannelConfigView, DeliveryView } from "@/lib/notifications/contract";
import { deliveryHealth, listDeadLetters } from "@/lib/notifications/health";
import { listRules } from "@/lib/notifications/rules";
import { listGroupSubscriptions } from "@/lib/notifications/subscriptions";
import { NotificationsAdmin } from "@/components/notifications/notifications-admin";

export const dynamic = "force-dynamic";

const shape = <T extends z.ZodType>(schema: T, value: unknown): z.output<T> => schema.parse(toJsonValue(value));

export default async function NotificationsAdminPage() {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin");
  if (principal.role !== "admin") {
    return (
      <div className="page">
        <h1>Notifications</h1>
        <p className="error-box">403 — notification administration requires the admin role; you are {principal.role.replace("_", " ")}.</p>
      </div>
    );
  }
  const now = systemClock.now();
  const [channels, rules, groups, health, dead] = await Promise.all([
    listChannelConfigs(principal),
    listRules(principal, now),
    listGroupSubscriptions(principal),
    deliveryHealth(principal, { hours: 72, limit: 50 }, now),
    listDeadLetters(principal, { page: 1, page_size: 50 }),
  ]);
  return (
    <div className="page">
      <h1>Notifications</h1>
      <p className="muted">Channel providers, alert rules and their next runs, email groups, delivery health and dead letters for {principal.orgName}.</p>
      <NotificationsAdmin
        channels={channels.items.map((c) => shape(ChannelConfigView, c))}
        rules={rules.items.map((r) => shape(RuleView, r))}
        groups={groups.items.map((g) => shape(GroupSubscriptionView, g))}
        health={shape(DeliveryHealth, health)}
        deadLetters={dead.items.map((d) => shape(DeliveryView, d))}
        deadLetterTotal={dead.total}
      />
    </div>
  );
}
