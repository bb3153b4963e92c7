import { route } from "@/lib/api/route";
import { listInbox } from "@/lib/notifications/operations";

export const GET = route(listInbox);
