import { route } from "@/lib/api/route";
import { restoreVersion } from "@/lib/dashboards/versions-operations";

export const POST = route(restoreVersion);
