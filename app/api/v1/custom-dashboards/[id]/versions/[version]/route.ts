import { route } from "@/lib/api/route";
import { getVersion } from "@/lib/dashboards/versions-operations";

export const GET = route(getVersion);
