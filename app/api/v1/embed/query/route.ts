import { route } from "@/lib/api/route";
import { queryEmbed } from "@/lib/dashboards/contract";
import { verifyEmbedToken } from "@/lib/dashboards/embed";
import { queryEmbedded } from "@/lib/dashboards/query";

export const POST = route(queryEmbed, async ({ body }) => queryEmbedded(await verifyEmbedToken(body.token), body.filters, body.widget_ids));
