import { route } from "@/lib/api/route";
import { createUnsubscribe, listUnsubscribes } from "@/lib/notifications/operations";

export const GET = route(listUnsubscribes);
export const POST = route(createUnsubscribe);
