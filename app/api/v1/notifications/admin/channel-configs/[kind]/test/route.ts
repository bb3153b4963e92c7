import { route } from "@/lib/api/route";
import { testChannelEndpoint } from "@/lib/notifications/contract";
import { testChannel } from "@/lib/notifications/admin/channel-test";
import { systemClock } from "@/lib/notifications/clock";

export const POST = route(testChannelEndpoint, ({ principal, params }) => testChannel(principal, params.kind, systemClock.now()));
