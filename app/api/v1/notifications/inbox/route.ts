import { route } from "@/lib/api/route";
import { listInboxEndpoint } from "@/lib/notifications/contract";
import { listInbox } from "@/lib/notifications/inbox";

export const GET = route(listInboxEndpoint, ({ principal, query }) => listInbox(principal, query));
