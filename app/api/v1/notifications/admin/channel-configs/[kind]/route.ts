import { route } from "@/lib/api/route";
import { putChannelConfigEndpoint } from "@/lib/notifications/contract";
import { putChannelConfig } from "@/lib/notifications/admin/channels";

export const PUT = route(putChannelConfigEndpoint, ({ principal, params, body }) => putChannelConfig(principal, params.kind, body));
