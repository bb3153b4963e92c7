import { route } from "@/lib/api/route";
import { createUnsubscribeEndpoint, listUnsubscribesEndpoint } from "@/lib/notifications/contract";
import { systemClock } from "@/lib/notifications/clock";
import { createUnsubscribe, listUnsubscribes } from "@/lib/notifications/admin/unsubscribes";

export const GET = route(listUnsubscribesEndpoint, ({ principal, query }) => listUnsubscribes(principal, query));
export const POST = route(createUnsubscribeEndpoint, ({ principal, body }) => createUnsubscribe(principal, body, systemClock.now()));
