import { route } from "@/lib/api/route";
import { listVersions } from "@/lib/dashboards/versions-operations";

export const GET = route(listVersions);
