import { route } from "@/lib/api/route";
import { markInboxRead } from "@/lib/notifications/operations";

export const POST = route(markInboxRead);
