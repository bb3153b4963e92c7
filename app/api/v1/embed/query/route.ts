import { route } from "@/lib/api/route";
import { queryEmbed } from "@/lib/dashboards/operations";

export const POST = route(queryEmbed);
