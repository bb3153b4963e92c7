import { route } from "@/lib/api/route";
import { deleteUnsubscribe } from "@/lib/notifications/operations";

export const DELETE = route(deleteUnsubscribe);
