import { route } from "@/lib/api/route";
import { listEmbeds } from "@/lib/dashboards/contract";
import * as embeds from "@/lib/dashboards/embed";

export const GET = route(listEmbeds, ({ principal, params, query }) => embeds.listEmbeds(principal, params.id, query));
