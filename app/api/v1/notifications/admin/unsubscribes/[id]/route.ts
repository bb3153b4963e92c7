import { route } from "@/lib/api/route";
import { deleteUnsubscribeEndpoint } from "@/lib/notifications/contract";
import { deleteUnsubscribe } from "@/lib/notifications/admin/unsubscribes";

export const DELETE = route(deleteUnsubscribeEndpoint, ({ principal, params }) => deleteUnsubscribe(principal, params.id));
