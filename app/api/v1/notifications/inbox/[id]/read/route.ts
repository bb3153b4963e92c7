import { route } from "@/lib/api/route";
import { markInboxReadEndpoint } from "@/lib/notifications/contract";
import { systemClock } from "@/lib/notifications/clock";
import { markInboxRead } from "@/lib/notifications/inbox";

export const POST = route(markInboxReadEndpoint, ({ principal, params }) => markInboxRead(principal, params.id, systemClock.now()));
