import { route } from "@/lib/api/route";
import { inviteMember, listInvitations } from "@/lib/members/operations";

export const GET = route(listInvitations);
export const POST = route(inviteMember);
