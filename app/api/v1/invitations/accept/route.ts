import { route } from "@/lib/api/route";
import { acceptInvitation } from "@/lib/members/operations";

export const POST = route(acceptInvitation);
