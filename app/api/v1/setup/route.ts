import { route } from "@/lib/api/route";
import { getSetup, runSetup } from "@/lib/members/operations";

export const GET = route(getSetup);
export const POST = route(runSetup);
