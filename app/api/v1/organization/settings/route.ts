import { route } from "@/lib/api/route";
import { getOrganizationSettings, putOrganizationSettings } from "@/lib/organizations/operations";

export const GET = route(getOrganizationSettings);
export const PUT = route(putOrganizationSettings);
