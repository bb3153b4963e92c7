import { route } from "@/lib/api/route";
import { putChannelConfig } from "@/lib/notifications/operations";

export const PUT = route(putChannelConfig);
