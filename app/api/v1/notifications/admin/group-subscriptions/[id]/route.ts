import { route } from "@/lib/api/route";
import { deleteGroupSubscription } from "@/lib/notifications/operations";

export const DELETE = route(deleteGroupSubscription);
