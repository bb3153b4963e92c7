import { route } from "@/lib/api/route";
import { embedDashboard } from "@/lib/dashboards/contract";
import { createEmbed } from "@/lib/dashboards/embed";

export const POST = route(embedDashboard, ({ principal, params, body }) => createEmbed(principal, params.id, body));
