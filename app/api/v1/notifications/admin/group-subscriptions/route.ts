import { route } from "@/lib/api/route";
import { createGroupSubscription, listGroupSubscriptions } from "@/lib/notifications/operations";

export const GET = route(listGroupSubscriptions);
export const POST = route(createGroupSubscription);
