import { route } from "@/lib/api/route";
import { deleteMember, updateMember } from "@/lib/members/operations";

export const PATCH = route(updateMember);
export const DELETE = route(deleteMember);
