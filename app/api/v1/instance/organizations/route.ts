import { route } from "@/lib/api/route";
import { createInstanceOrganization, listInstanceOrganizations } from "@/lib/instance/operations";

export const GET = route(listInstanceOrganizations);
export const POST = route(createInstanceOrganization);
