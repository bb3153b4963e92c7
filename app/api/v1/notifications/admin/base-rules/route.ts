import { route } from "@/lib/api/route";
import { listBaseRulesEndpoint } from "@/lib/notifications/contract";
import { listBaseRules } from "@/lib/notifications/admin/rules";

export const GET = route(listBaseRulesEndpoint, async () => listBaseRules());
