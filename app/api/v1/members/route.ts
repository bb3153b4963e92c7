import { route } from "@/lib/api/route";
import { listMembers } from "@/lib/members/operations";

export const GET = route(listMembers);
