import { route } from "@/lib/api/route";
import { testChannel } from "@/lib/notifications/operations";

export const POST = route(testChannel);
