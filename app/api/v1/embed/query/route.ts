import { enforceLimit, route } from "@/lib/api/route";
import { EMBED_GRANT_RATE_LIMIT, queryEmbed } from "@/lib/dashboards/contract";
import { verifyEmbedToken } from "@/lib/dashboards/embed";
import { queryEmbedded } from "@/lib/dashboards/query";

export const POST = route(queryEmbed, async ({ body }) => {
  const grant = await verifyEmbedToken(body.token);
  await enforceLimit(`embed grant ${grant.embedId}`, EMBED_GRANT_RATE_LIMIT);
  return queryEmbedded(grant, body.filters, body.widget_ids);
});
