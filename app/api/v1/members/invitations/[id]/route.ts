import { route } from "@/lib/api/route";
import { revokeInvitation } from "@/lib/members/operations";

export const DELETE = route(revokeInvitation);
