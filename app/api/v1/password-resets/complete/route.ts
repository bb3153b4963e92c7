import { route } from "@/lib/api/route";
import { completePasswordReset } from "@/lib/members/operations";

export const POST = route(completePasswordReset);
