import { route } from "@/lib/api/route";
import { revokeEmbed } from "@/lib/dashboards/operations";

export const DELETE = route(revokeEmbed);
