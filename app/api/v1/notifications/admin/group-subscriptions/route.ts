import { route } from "@/lib/api/route";
import { createGroupSubscriptionEndpoint, listGroupSubscriptionsEndpoint } from "@/lib/notifications/contract";
import { systemClock } from "@/lib/notifications/clock";
import { createGroupSubscription, listGroupSubscriptions } from "@/lib/notifications/admin/group-subscriptions";

export const GET = route(listGroupSubscriptionsEndpoint, ({ principal, query }) => listGroupSubscriptions(principal, query));
export const POST = route(createGroupSubscriptionEndpoint, ({ principal, body }) => createGroupSubscription(principal, body, systemClock.now()));
