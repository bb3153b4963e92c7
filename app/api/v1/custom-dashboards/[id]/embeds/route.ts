import { route } from "@/lib/api/route";
import { listEmbeds } from "@/lib/dashboards/operations";

export const GET = route(listEmbeds);
