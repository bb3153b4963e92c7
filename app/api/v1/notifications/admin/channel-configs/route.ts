import { route } from "@/lib/api/route";
import { listChannelConfigs } from "@/lib/notifications/operations";

export const GET = route(listChannelConfigs);
