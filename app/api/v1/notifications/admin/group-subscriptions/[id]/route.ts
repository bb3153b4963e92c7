import { route } from "@/lib/api/route";
import { deleteGroupSubscriptionEndpoint } from "@/lib/notifications/contract";
import { deleteGroupSubscription } from "@/lib/notifications/admin/group-subscriptions";

export const DELETE = route(deleteGroupSubscriptionEndpoint, ({ principal, params }) => deleteGroupSubscription(principal, params.id));
