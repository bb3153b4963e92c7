import { route } from "@/lib/api/route";
import { revokeEmbed } from "@/lib/dashboards/contract";
import * as embeds from "@/lib/dashboards/embed";

export const DELETE = route(revokeEmbed, ({ principal, params }) => embeds.revokeEmbed(principal, params.id, params.embed_id));
