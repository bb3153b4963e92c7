import { route } from "@/lib/api/route";
import { listChannelConfigsEndpoint } from "@/lib/notifications/contract";
import { listChannelConfigs } from "@/lib/notifications/admin/channels";

export const GET = route(listChannelConfigsEndpoint, ({ principal }) => listChannelConfigs(principal));
