import { route } from "@/lib/api/route";
import { diffVersions } from "@/lib/dashboards/versions-operations";

export const GET = route(diffVersions);
