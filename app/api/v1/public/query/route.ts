import { route } from "@/lib/api/route";
import { queryPublicDashboard } from "@/lib/dashboards/contract";
import { queryPublic } from "@/lib/dashboards/query";

export const POST = route(queryPublicDashboard, ({ body }) => queryPublic(body.org, body.slug, body.filters, body.widget_ids));
