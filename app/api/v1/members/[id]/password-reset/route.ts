import { route } from "@/lib/api/route";
import { resetMemberPassword } from "@/lib/members/operations";

export const POST = route(resetMemberPassword);
